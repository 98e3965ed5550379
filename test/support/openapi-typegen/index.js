import openapiTS, { astToString } from 'openapi-typescript';

/** The TypeScript declarations (`paths`, `components`, `operations`) of an OpenAPI document, as openapi-typescript writes them. */
export async function generateTypes(document) {
  return astToString(await openapiTS(document));
}
