/** `/v1/files`: uploaded files, stored in the database. */
export { filesFeature } from './files.feature.ts';
