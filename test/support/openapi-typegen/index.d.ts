/** The TypeScript declarations (`paths`, `components`, `operations`) of an OpenAPI document, as openapi-typescript writes them. */
export declare function generateTypes(document: Record<string, unknown>): Promise<string>;
