/** Extension routes under `/api`: provider keys, API keys, usage. */
export { extensionsFeature } from './extensions.feature.ts';
