/** Models: `svc/<aggregator>/<id>` and `<provider>/<id>` references, the catalog and its routes. */
export { modelsFeature } from './models.feature.ts';
export { createModelResolver, type ModelResolver, type Aggregator } from './model-ref.ts';
export { createModelCatalog, type ModelCatalog } from './catalog.ts';
