import { afterEach, describe, expect, it } from 'vitest';
import { call, makeRunner } from '../runner.fixture.ts';
import type { Runner } from '../runner.ts';

let runner: Runner;
afterEach(() => runner?.close());

describe('runner profiles', () => {
  it('stores a profile and lists it as name and runtime', async () => {
    runner = makeRunner();
    const put = await call(runner, 'POST', '/runner/profiles', { body: { profile: { name: 'helper', runtime: 'runtime_a', model: 'm', systemPrompt: 'be kind' } } });
    expect(put.status).toBe(204);
    const res = await call(runner, 'GET', '/runner/profiles');
    expect(await res.json()).toEqual({ profiles: [{ name: 'helper', runtime: 'runtime_a' }] });
  });

  it('replaces a profile posted again under the same name', async () => {
    runner = makeRunner();
    await call(runner, 'POST', '/runner/profiles', { body: { profile: { name: 'p', runtime: 'general' } } });
    await call(runner, 'POST', '/runner/profiles', { body: { profile: { name: 'p', runtime: 'runtime_b' } } });
    expect(await (await call(runner, 'GET', '/runner/profiles')).json()).toEqual({ profiles: [{ name: 'p', runtime: 'runtime_b' }] });
  });

  it('rejects an unknown runtime with 400 naming the field', async () => {
    runner = makeRunner();
    const res = await call(runner, 'POST', '/runner/profiles', { body: { profile: { name: 'p', runtime: 'gpt' } } });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/^profile\.runtime: /);
  });

  it('rejects a profile without a name and a body that is not JSON', async () => {
    runner = makeRunner();
    const noName = await call(runner, 'POST', '/runner/profiles', { body: { profile: { runtime: 'general' } } });
    expect(noName.status).toBe(400);
    expect((await noName.json()).error).toMatch(/^profile\.name: /);
    const junk = await call(runner, 'POST', '/runner/profiles', { body: '{nope' });
    expect(junk.status).toBe(400);
    expect((await junk.json()).error).toBe('body: malformed JSON');
  });

  it('rejects a malformed MCP server spec with the path of the bad field', async () => {
    runner = makeRunner();
    const res = await call(runner, 'POST', '/runner/profiles', { body: { profile: { name: 'p', runtime: 'general', mcpServers: [{ name: 'x', url: 'not a url' }] } } });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/^profile\.mcpServers\.0\.url: /);
  });

  it('keeps each tenant\'s profiles to itself', async () => {
    runner = makeRunner();
    await call(runner, 'POST', '/runner/profiles', { tenant: 'acme', body: { profile: { name: 'secret', runtime: 'general' } } });
    expect(await (await call(runner, 'GET', '/runner/profiles', { tenant: 'other' })).json()).toEqual({ profiles: [] });
    expect(await (await call(runner, 'GET', '/runner/profiles')).json()).toEqual({ profiles: [] });
    expect(await (await call(runner, 'GET', '/runner/profiles', { tenant: 'acme' })).json()).toEqual({ profiles: [{ name: 'secret', runtime: 'general' }] });
  });

  it('deletes a profile, and deleting it again is still 204', async () => {
    runner = makeRunner();
    await call(runner, 'POST', '/runner/profiles', { body: { profile: { name: 'p', runtime: 'general' } } });
    expect((await call(runner, 'DELETE', '/runner/profiles/p')).status).toBe(204);
    expect((await call(runner, 'DELETE', '/runner/profiles/p')).status).toBe(204);
    expect(await (await call(runner, 'GET', '/runner/profiles')).json()).toEqual({ profiles: [] });
  });
});

describe('runner pools', () => {
  it('stores, lists and deletes pools per tenant', async () => {
    runner = makeRunner();
    const pool = { name: 'team', description: 'd', members: [{ profile: 'p', role: 'lead' }], fs: { read: ['/{pool}'], write: [] } };
    expect((await call(runner, 'POST', '/runner/pools', { tenant: 't1', body: { pool } })).status).toBe(204);
    expect(await (await call(runner, 'GET', '/runner/pools', { tenant: 't1' })).json()).toEqual({ pools: [pool] });
    expect(await (await call(runner, 'GET', '/runner/pools', { tenant: 't2' })).json()).toEqual({ pools: [] });
    expect((await call(runner, 'DELETE', '/runner/pools/team', { tenant: 't1' })).status).toBe(204);
    expect(await (await call(runner, 'GET', '/runner/pools', { tenant: 't1' })).json()).toEqual({ pools: [] });
  });

  it('rejects a pool whose members are not objects', async () => {
    runner = makeRunner();
    const res = await call(runner, 'POST', '/runner/pools', { body: { pool: { name: 'team', members: ['p'] } } });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/^pool\.members\.0: /);
  });
});
