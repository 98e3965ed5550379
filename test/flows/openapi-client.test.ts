import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateTypes } from 'svc-openapi-typegen';
import { startTestSvc, type TestSvc } from '../support/svc.ts';

/**
 * A typed client generated from the live /openapi.json, as a user of the API would make one: openapi-typescript writes
 * the types, a small program uses them with openapi-fetch, the project's TypeScript compiles it (the types are usable
 * and catch a wrong call), and Node runs it: it creates a profile, starts a run on the demo model and reads the run's
 * event stream to its end.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

const DRIVER = `import createClient from 'openapi-fetch';
import type { paths } from './api.ts';

const client = createClient<paths>({ baseUrl: process.env.SVC_URL, headers: { authorization: \`Bearer \${process.env.SVC_KEY}\` } });

const profile = await client.POST('/api/profiles', { body: { name: 'typed-client', runtime: 'general', model: 'demo:echo', systemPrompt: 'Answer briefly.' } });
if (!profile.data) throw new Error(\`creating the profile: \${JSON.stringify(profile.error)}\`);
const created = await client.POST('/api/runs', { body: { profile: profile.data.name, prompt: 'hello from a typed client' } });
if (!created.data) throw new Error(\`starting the run: \${JSON.stringify(created.error)}\`);
const runId: string = created.data.runId;

const stream = await client.GET('/api/runs/{id}/stream', { params: { path: { id: runId } }, parseAs: 'stream' });
if (!stream.data) throw new Error(\`reading the stream: \${stream.response.status}\`);
const events: Array<{ type: string; message?: string }> = [];
const decoder = new TextDecoder();
let buffered = '';
for await (const chunk of stream.data) {
  buffered += decoder.decode(chunk, { stream: true });
  let end: number;
  while ((end = buffered.indexOf('\\n\\n')) >= 0) {
    const frame = buffered.slice(0, end);
    buffered = buffered.slice(end + 2);
    const data = frame.split('\\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trim()).join('\\n');
    if (data) events.push(JSON.parse(data));
  }
}

const detail = await client.GET('/api/runs/{id}', { params: { path: { id: runId } } });
if (!detail.data) throw new Error(\`reading the run: \${JSON.stringify(detail.error)}\`);
const status: 'queued' | 'running' | 'waiting' | 'ok' | 'error' | 'cancelled' | 'interrupted' = detail.data.status;
console.log(JSON.stringify({ profile: profile.data, runId, sessionId: created.data.sessionId, status, events }));

/** Never called: what the generated types refuse, checked by the compiler. */
export function refusedByTheTypes(): void {
  // @ts-expect-error a profile needs its runtime
  void client.POST('/api/profiles', { body: { name: 'no-runtime' } });
  // @ts-expect-error a run's path parameter is its id
  void client.GET('/api/runs/{id}', { params: { path: { runId } } });
  // @ts-expect-error the run's answer has no such field
  void created.data?.nope;
}
`;

describe('a typed client generated from the API reference', () => {
  let svc: TestSvc;
  let dir: string;
  beforeAll(async () => {
    svc = await startTestSvc({ DATABASE_URL: 'memory' }, 'all');
    dir = mkdtempSync(join(tmpdir(), 'svc-typed-client-'));
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('compiles against the generated types and drives a profile, a run and its stream', async () => {
    const document = (await (await fetch(`${svc.url}/openapi.json`)).json()) as Record<string, unknown>;
    writeFileSync(join(dir, 'api.ts'), await generateTypes(document));
    writeFileSync(join(dir, 'driver.ts'), DRIVER);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
    const compilerOptions = { target: 'es2024', module: 'nodenext', moduleResolution: 'nodenext', strict: true, noEmit: true, allowImportingTsExtensions: true, skipLibCheck: true, types: ['node'] };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['driver.ts'] }));

    // the project's compiler: the program type-checks, so the generated types are usable (and refuse wrong calls)
    const tsc = await run(join(ROOT, 'node_modules/.bin/tsc'), ['--noEmit', '-p', dir], { cwd: dir }).catch((err: { stdout: string; stderr: string }) => err);
    expect(`${tsc.stdout}${tsc.stderr}`.trim()).toBe('');

    const out = await run(join(ROOT, 'node_modules/.bin/node'), ['driver.ts'], { cwd: dir, env: { ...process.env, SVC_URL: svc.url, SVC_KEY: svc.key } });
    const result = JSON.parse(out.stdout) as { profile: { name: string; model: string }; runId: string; status: string; events: Array<{ type: string; message?: string }> };
    expect(result.profile).toMatchObject({ name: 'typed-client', model: 'demo:echo' });
    expect(result.runId).toMatch(/^run_/);
    expect(result.status).toBe('ok');
    const terminal = result.events.filter((e) => e.type === 'result' || e.type === 'error');
    expect(terminal).toEqual([{ type: 'result', message: 'demo reply: hello from a typed client', ts: expect.any(String) }]);
    expect(result.events.at(-1)).toBe(terminal[0]);
  }, 120_000);
});
