/** The package version, from package.json. */
export { PACKAGE_VERSION as VERSION } from '../shared/package-root.ts';
