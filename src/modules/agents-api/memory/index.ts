/** `/v1/memory_stores`: memory stores on the agents API. */
export { memoryStoresFeature } from './memory.feature.ts';
