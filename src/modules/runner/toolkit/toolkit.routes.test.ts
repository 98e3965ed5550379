import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { call, invokeTool, makeRunner, newSession, putProfile, testDataDir } from '../runner.fixture.ts';
import type { Runner } from '../runner.ts';

let runner: Runner;
afterEach(() => runner?.close());

async function sessionWith(tools?: string[], extra: Record<string, unknown> = {}) {
  const dataDir = testDataDir();
  runner = makeRunner({ config: { dataDir } });
  await putProfile(runner, { name: 'helper', ...(tools ? { tools } : {}), ...extra });
  const id = await newSession(runner, 'helper');
  return { id, dataDir, workDir: join(dataDir, 'sessions', id, 'work') };
}

describe('toolkit specs', () => {
  it('lists every platform tool with a JSON input schema, a scope and a capability', async () => {
    runner = makeRunner();
    const { specs } = await (await call(runner, 'GET', '/runner/toolkit/specs')).json();
    expect(specs.map((s: any) => s.name)).toEqual(['fs_read', 'fs_write', 'fs_edit', 'fs_list', 'fs_search', 'run_command', 'delegate', 'notify', 'automation_memory', 'memory', 'memory_search']);
    expect(specs.find((s: any) => s.name === 'fs_write')).toMatchObject({
      scope: 'session',
      capability: 'fs.write',
      inputSchema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] },
    });
    expect(specs.find((s: any) => s.name === 'delegate')).toMatchObject({ scope: 'pool', capability: 'runs.delegate' });
  });

  it('scopes a session to the safe default set when the profile names no tools', async () => {
    const { id } = await sessionWith();
    const { specs } = await (await call(runner, 'GET', `/runner/sessions/${id}/toolkit/specs`)).json();
    expect(specs.map((s: any) => s.name)).toEqual(['fs_read', 'fs_write', 'fs_edit', 'fs_list', 'fs_search']);
  });

  it('scopes a session to the bundles and names its profile selects', async () => {
    const { id } = await sessionWith(['@exec', 'notify', 'fs_read', 'not_a_tool']);
    const { specs } = await (await call(runner, 'GET', `/runner/sessions/${id}/toolkit/specs`)).json();
    expect(specs.map((s: any) => s.name)).toEqual(['fs_read', 'run_command', 'notify']);
  });

  it('answers 404 for the specs of an unknown session', async () => {
    runner = makeRunner();
    const res = await call(runner, 'GET', '/runner/sessions/nope/toolkit/specs');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'unknown session: nope' });
  });
});

describe('toolkit invoke', () => {
  it('writes a file into the session work directory and reads it back', async () => {
    const { id, workDir } = await sessionWith();
    const write = await invokeTool(runner, id, 'fs_write', { path: 'notes/plan.md', content: 'step one' });
    expect(write).toEqual({ status: 200, body: { result: { ok: true, value: { path: '/work/notes/plan.md', bytesWritten: 8, created: true } } } });
    expect(readFileSync(join(workDir, 'notes/plan.md'), 'utf8')).toBe('step one');
    const read = await invokeTool(runner, id, 'fs_read', { path: '/work/notes/plan.md' });
    expect(read.body.result).toEqual({ ok: true, value: { path: '/work/notes/plan.md', size: 8, truncated: false, content: 'step one' } });
  });

  it('answers a binary file with its size and media type, gives its bytes in base64 when asked, and does not edit it', async () => {
    const { id, workDir } = await sessionWith();
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0xff, 0xfe]);
    mkdirSync(workDir, { recursive: true });
    writeFileSync(join(workDir, 'logo.png'), png);
    writeFileSync(join(workDir, 'environ'), 'PATH=/bin\0HOME=/home\0');
    writeFileSync(join(workDir, 'latin1.txt'), Buffer.from('caf\xe9', 'latin1'));
    const read = async (path: string, encoding?: string) => (await invokeTool(runner, id, 'fs_read', { path, ...(encoding ? { encoding } : {}) })).body.result;

    expect(await read('logo.png')).toEqual({ ok: true, value: { path: '/work/logo.png', size: 14, truncated: false, binary: true, mediaType: 'image/png' } });
    // a NUL byte makes a file binary, as does text that is not UTF-8; without a known name it is application/octet-stream
    expect(await read('environ')).toEqual({ ok: true, value: { path: '/work/environ', size: 21, truncated: false, binary: true, mediaType: 'application/octet-stream' } });
    expect((await read('latin1.txt')).value).toMatchObject({ binary: true, mediaType: 'text/plain', size: 4 });
    expect(await read('logo.png', 'base64')).toEqual({ ok: true, value: { path: '/work/logo.png', size: 14, truncated: false, encoding: 'base64', mediaType: 'image/png', content: png.toString('base64') } });
    expect(Buffer.from((await read('environ', 'base64')).value.content, 'base64').toString()).toBe('PATH=/bin\0HOME=/home\0');

    const edit = await invokeTool(runner, id, 'fs_edit', { path: 'environ', old_string: 'PATH', new_string: 'P' });
    expect(edit.body.result).toEqual({ ok: false, value: { error: '/work/environ: a binary file (21 bytes, application/octet-stream), not text' } });
    expect(readFileSync(join(workDir, 'environ'), 'utf8')).toBe('PATH=/bin\0HOME=/home\0');
  });

  it('reads a file past 1 MiB in pieces from an offset, the last piece not truncated', async () => {
    const { id, workDir } = await sessionWith();
    const big = Buffer.alloc(1024 * 1024 + 10, 'x');
    big.write('tail', big.length - 4);
    mkdirSync(workDir, { recursive: true });
    writeFileSync(join(workDir, 'big.txt'), big);
    const first = (await invokeTool(runner, id, 'fs_read', { path: 'big.txt', encoding: 'base64' })).body.result.value;
    expect(first).toMatchObject({ size: big.length, truncated: true });
    expect(Buffer.from(first.content, 'base64').byteLength).toBe(1024 * 1024);
    const rest = (await invokeTool(runner, id, 'fs_read', { path: 'big.txt', offset: 1024 * 1024 })).body.result;
    expect(rest).toEqual({ ok: true, value: { path: '/work/big.txt', size: big.length, truncated: false, content: 'xxxxxxtail' } });
    expect((await invokeTool(runner, id, 'fs_read', { path: 'big.txt', offset: big.length + 5 })).body.result.value).toMatchObject({ truncated: false, content: '' });
  });

  it('edits by exact replacement and refuses an ambiguous edit', async () => {
    const { id, workDir } = await sessionWith();
    await invokeTool(runner, id, 'fs_write', { path: 'a.txt', content: 'red fish, blue fish' });
    const ambiguous = await invokeTool(runner, id, 'fs_edit', { path: 'a.txt', old_string: 'fish', new_string: 'cat' });
    expect(ambiguous.body.result).toEqual({ ok: false, value: { error: '/work/a.txt: old_string occurs 2 times; give more context or set replace_all' } });
    const edited = await invokeTool(runner, id, 'fs_edit', { path: 'a.txt', old_string: 'blue fish', new_string: 'blue whale' });
    expect(edited.body.result).toEqual({ ok: true, value: { path: '/work/a.txt', replacements: 1 } });
    expect(readFileSync(join(workDir, 'a.txt'), 'utf8')).toBe('red fish, blue whale');
  });

  it('lists directories and searches files by substring and by regex', async () => {
    const { id } = await sessionWith();
    await invokeTool(runner, id, 'fs_write', { path: 'src/a.ts', content: 'const answer = 42;\nexport {}' });
    await invokeTool(runner, id, 'fs_write', { path: 'src/b.ts', content: 'let x = 1;' });
    const list = await invokeTool(runner, id, 'fs_list', { path: '/work', recursive: true });
    expect(list.body.result.value.entries).toEqual([
      { path: '/work/src', type: 'dir' },
      { path: '/work/src/a.ts', type: 'file' },
      { path: '/work/src/b.ts', type: 'file' },
    ]);
    const root = await invokeTool(runner, id, 'fs_list', { path: '/' });
    expect(root.body.result.value.entries.map((e: any) => e.path)).toEqual(['/home', '/pool', '/work']);
    const plain = await invokeTool(runner, id, 'fs_search', { pattern: 'answer' });
    expect(plain.body.result.value.matches).toEqual([{ path: '/work/src/a.ts', line: 1, text: 'const answer = 42;' }]);
    const regex = await invokeTool(runner, id, 'fs_search', { pattern: '^(let|const) \\w+ = \\d+;$', regex: true });
    expect(regex.body.result.value.matches.map((m: any) => m.path)).toEqual(['/work/src/a.ts', '/work/src/b.ts']);
  });

  it('searches with a linear-time engine: a catastrophic pattern over a long line returns, and the runner keeps answering', async () => {
    const { id } = await sessionWith();
    const other = await newSession(runner, 'helper');
    const long = 'a'.repeat(100_000) + 'b';
    await invokeTool(runner, id, 'fs_write', { path: 'long.txt', content: `short line\n${long}\nanother` });
    // (a+)+$ backtracks exponentially in a backtracking engine on 'aaaa…b': it would never return
    const [none, some, answered] = await Promise.all([
      invokeTool(runner, id, 'fs_search', { pattern: '(a+)+$', regex: true }),
      invokeTool(runner, id, 'fs_search', { pattern: '(A+)+B$', regex: true, ignore_case: true }),
      invokeTool(runner, other, 'fs_list', { path: '/work' }),
    ]);
    expect(none.body.result).toEqual({ ok: true, value: expect.objectContaining({ matches: [] }) });
    expect(some.body.result.value.matches).toEqual([{ path: '/work/long.txt', line: 2, text: long.slice(0, 300) }]);
    expect(answered.body.result.ok).toBe(true);
  });

  it('names the regular expression syntax fs_search does not support instead of running it', async () => {
    const { id } = await sessionWith();
    await invokeTool(runner, id, 'fs_write', { path: 'a.txt', content: 'abab foobar' });
    const error = async (pattern: string) => (await invokeTool(runner, id, 'fs_search', { pattern, regex: true })).body.result;
    expect(await error('(ab)\\1')).toEqual({ ok: false, value: { error: expect.stringMatching(/^pattern: backreferences are not supported/) } });
    expect(await error('foo(?=bar)')).toEqual({ ok: false, value: { error: expect.stringMatching(/^pattern: lookahead and lookbehind are not supported/) } });
    expect(await error('(?<!x)foo')).toEqual({ ok: false, value: { error: expect.stringMatching(/^pattern: lookahead and lookbehind are not supported/) } });
    expect(await error('[a-')).toEqual({ ok: false, value: { error: expect.stringMatching(/^pattern: not a valid regular expression/) } });
    // JavaScript escapes a model writes still work
    const escaped = await invokeTool(runner, id, 'fs_search', { pattern: '\\u0066oo\\w+$', regex: true });
    expect(escaped.body.result.value.matches).toEqual([{ path: '/work/a.txt', line: 1, text: 'abab foobar' }]);
  });

  it('reports bad tool input and a missing file as tool failures the model can read', async () => {
    const { id } = await sessionWith();
    expect((await invokeTool(runner, id, 'fs_write', { path: 'x' })).body).toEqual({ result: { ok: false, value: { error: 'content: Invalid input: expected string, received undefined' } } });
    expect((await invokeTool(runner, id, 'fs_read', { path: 'missing.txt' })).body).toEqual({ result: { ok: false, value: { error: '/work/missing.txt: no such file or directory' } } });
  });

  it('keeps /home per profile across sessions and shares /pool/<pool> among the pool\'s members', async () => {
    runner = makeRunner();
    await putProfile(runner, { name: 'writer' });
    await putProfile(runner, { name: 'editor' });
    await putProfile(runner, { name: 'stranger' });
    await call(runner, 'POST', '/runner/pools', { body: { pool: { name: 'desk', members: [{ profile: 'writer' }, { profile: 'editor' }] } } });
    const [w1, w2, ed, st] = [await newSession(runner, 'writer'), await newSession(runner, 'writer'), await newSession(runner, 'editor'), await newSession(runner, 'stranger')];
    await invokeTool(runner, w1, 'fs_write', { path: '/home/style.md', content: 'short sentences' });
    await invokeTool(runner, w1, 'fs_write', { path: '/pool/desk/draft.md', content: 'first draft' });
    expect((await invokeTool(runner, w2, 'fs_read', { path: '/home/style.md' })).body.result.value.content).toBe('short sentences');
    expect((await invokeTool(runner, ed, 'fs_read', { path: '/home/style.md' })).body.result.ok).toBe(false);
    expect((await invokeTool(runner, ed, 'fs_read', { path: '/pool/desk/draft.md' })).body.result.value.content).toBe('first draft');
    expect((await invokeTool(runner, st, 'fs_read', { path: '/pool/desk/draft.md' })).body.result.value.error).toBe('read of /pool/desk/draft.md refused: profile stranger is in no pool');
  });

  it('refuses a tool outside the profile scope with 403 naming tool and profile', async () => {
    const { id } = await sessionWith(['@files-read']);
    const res = await invokeTool(runner, id, 'fs_write', { path: 'x', content: 'y' });
    expect(res).toEqual({ status: 403, body: { error: 'tool fs_write is not in the scope of profile helper' } });
  });

  it('answers 404 for an unknown tool or session and 400 for a bad body', async () => {
    const { id } = await sessionWith();
    expect(await invokeTool(runner, id, 'rm_rf', {})).toEqual({ status: 404, body: { error: 'unknown tool: rm_rf' } });
    expect((await invokeTool(runner, 'sess-none', 'fs_read', { path: 'a' })).status).toBe(404);
    const bad = await call(runner, 'POST', `/runner/sessions/${id}/toolkit/invoke`, { body: { input: {} } });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatch(/^toolName: /);
  });

  it('hides another tenant\'s session and stops serving a deleted one, removing its scratch', async () => {
    const { id, workDir } = await sessionWith();
    await invokeTool(runner, id, 'fs_write', { path: 'a.txt', content: 'x' });
    expect((await invokeTool(runner, id, 'fs_read', { path: 'a.txt' }, 'intruder')).status).toBe(404);
    expect((await call(runner, 'DELETE', `/runner/sessions/${id}`)).status).toBe(204);
    expect(await invokeTool(runner, id, 'fs_read', { path: 'a.txt' })).toEqual({ status: 404, body: { error: `session shut down: ${id}` } });
    await expect.poll(() => existsSync(workDir)).toBe(false);
  });

  it('fails delegate and notify politely when the session has no run token', async () => {
    const { id } = await sessionWith(['@delegate', '@notify']);
    expect((await invokeTool(runner, id, 'notify', { message: 'hi' })).body.result).toEqual({ ok: false, value: { error: 'notify needs a run started by the conductor (this session has no run token)' } });
    const delegated = await invokeTool(runner, id, 'delegate', { profile: 'other', prompt: 'p' });
    expect(delegated.body.result.value.error).toBe('profile helper is in no pool; delegation is only between members of one pool');
  });

  it('holds the profile permission policy on a direct invoke too: deny never runs, ask without a run refuses', async () => {
    const { id, workDir } = await sessionWith(['@files'], { permissions: { fs_write: 'deny', fs_edit: 'ask' } });
    expect((await invokeTool(runner, id, 'fs_write', { path: 'x.txt', content: 'x' })).body.result).toEqual({
      ok: false,
      value: { error: 'tool fs_write denied by the permission policy of profile helper (fs_write: deny)' },
    });
    expect(existsSync(join(workDir, 'x.txt'))).toBe(false);
    const asked = await invokeTool(runner, id, 'fs_edit', { path: 'x.txt', old_string: 'a', new_string: 'b' });
    expect(asked.body.result.ok).toBe(false);
    expect(asked.body.result.value.error).toMatch(/^tool fs_edit was not run: it needs approval, and no conductor is there to ask/);
    expect((await invokeTool(runner, id, 'fs_list', { path: '/work' })).body.result.ok).toBe(true);
  });
});
