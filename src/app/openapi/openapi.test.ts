import { Hono } from 'hono';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { doc } from '../../shared/route-doc.ts';
import { buildOpenApi } from './openapi.ts';

/** The generator on a tiny app: what a route's `doc()` becomes in the OpenAPI document. */
describe('buildOpenApi', () => {
  type Node = { name: string; children: Node[] };
  const Tree: v.GenericSchema<Node> = v.object({ name: v.string(), children: v.array(v.lazy(() => Tree)) });
  const Menu: v.GenericSchema<{ label: string; items: unknown[] }> = v.object({ label: v.string(), items: v.array(v.lazy(() => Menu)) });
  const Strict = v.strictObject({ a: v.string(), b: v.nullable(v.number()), at: v.optional(v.pipe(v.string(), v.transform((t) => new Date(t)))) });
  const app = new Hono()
    .get('/api/trees/:id', doc({ summary: 'Get a tree', description: 'A tree.', response: Tree }), (c) => c.json({}))
    .get('/api/menus', doc({ summary: 'List menus', description: 'Menus.', response: v.array(Menu) }), (c) => c.json([]))
    .post('/api/things', doc({ summary: 'Create a thing', description: 'A thing.', body: Strict, response: Strict, status: 201, errors: [409] }), (c) => c.json({}, 201))
    .post('/api/device/code', doc({ summary: 'Start', description: 'No key.', body: v.object({}), response: v.object({ code: v.string() }), public: true }), (c) => c.json({}));
  const spec = buildOpenApi(app, '1.0.0') as any;

  it('moves each recursive definition to the components under its own name, and its references with it', () => {
    const tree = spec.paths['/api/trees/{id}'].get.responses['200'].content['application/json'].schema;
    const menus = spec.paths['/api/menus'].get.responses['200'].content['application/json'].schema;
    const treeRef = tree.properties.children.items.$ref as string;
    const menuRef = menus.items.properties.items.items.$ref as string;
    expect(treeRef).toMatch(/^#\/components\/schemas\/Definition\d+$/);
    expect(menuRef).toMatch(/^#\/components\/schemas\/Definition\d+$/);
    expect(menuRef).not.toBe(treeRef);
    const component = (ref: string) => spec.components.schemas[ref.split('/').at(-1)!];
    expect(component(treeRef).properties.children.items.$ref).toBe(treeRef);
    expect(Object.keys(component(menuRef).properties)).toEqual(['label', 'items']);
    expect(JSON.stringify(spec)).not.toContain('$defs');
  });

  it('keeps a request strict but lets an answer grow, in JSON Schema 2020-12', () => {
    const op = spec.paths['/api/things'].post;
    expect(op.requestBody.content['application/json'].schema).toMatchObject({ additionalProperties: false, required: ['a', 'b'] });
    const answer = op.responses['201'].content['application/json'].schema;
    expect(answer).not.toHaveProperty('additionalProperties');
    expect(answer.properties.b).toEqual({ anyOf: [{ type: 'number' }, { type: 'null' }] });
    // what JSON Schema cannot say (a transform) is left out, not a failure
    expect(answer.properties.at).toEqual({ type: 'string' });
    expect(JSON.stringify(spec)).not.toContain('$schema');
  });

  it('documents the errors a route can answer: its own, and those every route of its kind can', () => {
    expect(Object.keys(spec.paths['/api/things'].post.responses)).toEqual(['201', '400', '401', '403', '409', '413']);
    expect(Object.keys(spec.paths['/api/trees/{id}'].get.responses)).toEqual(['200', '401', '404']);
    expect(spec.paths['/api/things'].post.security).toEqual([{ apiKey: [] }]);
  });

  it('shows a route without credentials as such', () => {
    const op = spec.paths['/api/device/code'].post;
    expect(op.security).toEqual([]);
    expect(Object.keys(op.responses)).toEqual(['200', '400', '413']);
  });
});
