import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TENANT_HEADER } from '../../src/contracts/runner.ts';
import { insertKey } from '../../src/modules/conductor/identity/index.ts';
import { listen, type Listening } from '../support/listen.ts';
import { createTestDatabase } from '../support/pg.ts';
import { startTestSvc, type TestSvc } from '../support/svc.ts';

/**
 * Sandbox limits on the conductor's surface (issue 37): a profile's `limits`, a /v1 environment's `config.limits`,
 * a tenant's ceilings (`/api/tenants/{id}/limits`, operator only), each refused with a 400 naming the key and the
 * ceiling it passes; and what runners are sent: the conductor lists a recording pass-through in front of a real
 * runner, so the test reads the profile bodies the runner really got (held to the tenant's ceilings on the way).
 */
const TOKEN = 'limits-internal-token-0123456789';
const PEPPER = 'limits-test-pepper-0123456789';
// the operator's settings: the memory ceiling lowered to 4096 MiB, the pids default 256 and ceiling 4096
const OPERATOR = { SVC_SANDBOX_MEMORY_MIB_MAX: '4096', SVC_SANDBOX_MEMORY_MIB: '1024' };

interface Sent {
  path: string;
  tenant: string | null;
  body: { profile?: { name: string; limits?: Record<string, number> }; profileName?: string };
}

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let runner: TestSvc;
let runner2: TestSvc | undefined;
let proxy: Listening;
let conductor: TestSvc;
let acmeKey: string;
let memberKey: string;
const sent: Sent[] = [];

/** Forwards everything to the runner; keeps the profile bodies of POST /runner/profiles and /runner/sessions. */
async function recordingProxy(target: string): Promise<Listening> {
  return listen(async (req) => {
    const url = new URL(req.url);
    const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : new Uint8Array(await req.arrayBuffer());
    if (body && req.method === 'POST' && (url.pathname === '/runner/profiles' || url.pathname === '/runner/sessions')) {
      sent.push({ path: url.pathname, tenant: req.headers.get(TENANT_HEADER), body: JSON.parse(Buffer.from(body).toString()) });
    }
    const headers = new Headers(req.headers);
    headers.delete('host');
    return fetch(target + url.pathname + url.search, { method: req.method, headers, body, signal: req.signal });
  });
}

const call = async (method: string, path: string, json?: unknown, key?: string) => {
  const res = await conductor.api(path, { method, ...(json !== undefined ? { json } : {}), ...(key ? { key } : {}) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
};

/** The last profile body the runner got for `name` of tenant `tenant` at `path` (the session create carries one too). */
const lastSent = (tenant: string, name: string, path = '/runner/profiles') =>
  sent.filter((s) => s.tenant === tenant && s.path === path && (s.body.profile?.name ?? s.body.profileName) === name).at(-1)?.body.profile;

beforeAll(async () => {
  db = await createTestDatabase();
  runner = await startTestSvc({ SVC_INTERNAL_TOKEN: TOKEN, SVC_SANDBOX: 'off' }, 'runner');
  proxy = await recordingProxy(runner.url);
  conductor = await startTestSvc(
    { DATABASE_URL: db.url, SVC_RUNNERS: proxy.url, SVC_INTERNAL_TOKEN: TOKEN, AGENT_ORC_ADMIN_TENANT: 'default', AGENT_API_KEY_PEPPER: PEPPER, ...OPERATOR },
    'conductor',
  );
  expect((await call('POST', '/api/tenants', { id: 'acme', name: 'Acme' })).status).toBe(201);
  const keys = { db: conductor.server.built.database!.db, pepper: PEPPER, keyEnv: 'test' };
  acmeKey = (await insertKey(keys, 'acme', { name: 'acme owner', role: 'owner', createdBy: null, expiresAt: null })).token;
  memberKey = (await insertKey(keys, 'default', { name: 'operator member', role: 'member', createdBy: null, expiresAt: null })).token;
});
afterAll(async () => {
  await conductor?.stop();
  await runner2?.stop();
  await runner?.stop();
  await proxy?.close();
  await db?.drop().catch(() => {});
});

describe("a profile's limits", () => {
  it('are stored and returned, any subset of the keys', async () => {
    const created = await call('POST', '/api/profiles', { name: 'small', runtime: 'general', model: 'demo:echo', limits: { memoryMiB: 512, cpus: 0.5, wallSeconds: 60 } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.limits).toEqual({ memoryMiB: 512, cpus: 0.5, wallSeconds: 60 });
    expect((await call('GET', '/api/profiles/small')).body.limits).toEqual({ memoryMiB: 512, cpus: 0.5, wallSeconds: 60 });
    const replaced = await call('PUT', '/api/profiles/small', { name: 'small', runtime: 'general', model: 'demo:echo', limits: { pids: 64 } });
    expect(replaced.status).toBe(200);
    expect((await call('GET', '/api/profiles/small')).body.limits).toEqual({ pids: 64 });
  });

  it("are refused above the operator's ceiling, naming the key and the ceiling", async () => {
    const res = await call('POST', '/api/profiles', { name: 'big', runtime: 'general', limits: { memoryMiB: 8192 } });
    expect(res).toEqual({ status: 400, body: { error: "limits.memoryMiB: 8192 is above the operator's ceiling 4096" } });
    const put = await call('PUT', '/api/profiles/small', { name: 'small', runtime: 'general', limits: { cpus: 64 } });
    expect(put).toEqual({ status: 400, body: { error: "limits.cpus: 64 is above the operator's ceiling 4" } });
    expect((await call('GET', '/api/profiles/big')).status).toBe(404); // nothing half-written
  });

  it('refuses an unknown key and a value that is not a limit', async () => {
    const unknown = await call('POST', '/api/profiles', { name: 'odd', runtime: 'general', limits: { memory: 512 } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatch(/^limits\.memory: unknown field/);
    const fraction = await call('POST', '/api/profiles', { name: 'odd', runtime: 'general', limits: { pids: 1.5 } });
    expect(fraction.status).toBe(400);
    expect(fraction.body.error).toMatch(/^limits\.pids: pids: a whole number/);
    const tiny = await call('POST', '/api/profiles', { name: 'odd', runtime: 'general', limits: { memoryMiB: 1 } });
    expect(tiny.status).toBe(400);
    expect(tiny.body.error).toBe('limits.memoryMiB: expected >=16, received 1');
  });

  it('reach the runner as stored when the tenant has no ceilings of its own', async () => {
    expect(lastSent('default', 'small')).toMatchObject({ name: 'small', limits: { pids: 64 } });
    const created = await call('POST', '/api/profiles', { name: 'plain', runtime: 'general', model: 'demo:echo' });
    expect(created.status).toBe(201);
    expect(lastSent('default', 'plain')).not.toHaveProperty('limits');
  });
});

describe("a tenant's ceilings", () => {
  it('are set and read by the operator, and bound what the tenant may ask for', async () => {
    expect(await call('GET', '/api/tenants/acme/limits')).toEqual({
      status: 200,
      body: {
        tenantId: 'acme',
        limits: {},
        ceilings: expect.objectContaining({ memoryMiB: 4096, pids: 4096 }),
        defaults: expect.objectContaining({ memoryMiB: 1024, pids: 256 }),
      },
    });
    const put = await call('PUT', '/api/tenants/acme/limits', { memoryMiB: 512, pids: 64 });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({ tenantId: 'acme', limits: { memoryMiB: 512, pids: 64 }, ceilings: { memoryMiB: 512, pids: 64, cpus: 4 }, defaults: { memoryMiB: 512, pids: 64, cpus: 1 } });
    expect((await call('GET', '/api/tenants/acme/limits')).body.limits).toEqual({ memoryMiB: 512, pids: 64 });

    const above = await call('POST', '/api/profiles', { name: 'hungry', runtime: 'general', limits: { memoryMiB: 1024 } }, acmeKey);
    expect(above).toEqual({ status: 400, body: { error: "limits.memoryMiB: 1024 is above the tenant's ceiling 512" } });
    const operatorFirst = await call('POST', '/api/profiles', { name: 'hungry', runtime: 'general', limits: { memoryMiB: 5000 } }, acmeKey);
    expect(operatorFirst.body.error).toBe("limits.memoryMiB: 5000 is above the operator's ceiling 4096");
    // the operator's own tenant is not held to acme's ceilings
    expect((await call('POST', '/api/profiles', { name: 'hungry', runtime: 'general', model: 'demo:echo', limits: { memoryMiB: 1024 } })).status).toBe(201);
  });

  it("are refused above the operator's ceiling, with an unknown key, and for an unknown tenant", async () => {
    expect(await call('PUT', '/api/tenants/acme/limits', { diskMiB: 20000 })).toEqual({ status: 400, body: { error: "diskMiB: 20000 is above the operator's ceiling 16384" } });
    const unknown = await call('PUT', '/api/tenants/acme/limits', { memory_mib: 512 });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe("memory_mib: unknown field (did you mean memoryMiB?)");
    expect(await call('PUT', '/api/tenants/nobody/limits', { pids: 64 })).toEqual({ status: 404, body: { error: 'unknown tenant' } });
    expect(await call('GET', '/api/tenants/nobody/limits')).toEqual({ status: 404, body: { error: 'unknown tenant' } });
    expect((await call('GET', '/api/tenants/acme/limits')).body.limits).toEqual({ memoryMiB: 512, pids: 64 }); // unchanged
  });

  it('are the operator tenant\'s to change: another tenant gets 404, a member of the operator tenant 403', async () => {
    expect((await call('GET', '/api/tenants/acme/limits', undefined, acmeKey)).status).toBe(404);
    expect((await call('PUT', '/api/tenants/acme/limits', {}, acmeKey)).status).toBe(404);
    const member = await call('PUT', '/api/tenants/acme/limits', {}, memberKey);
    expect(member.status).toBe(403);
    expect(member.body.error).toMatch(/tenant management needs role admin or owner/);
    expect((await call('GET', '/api/tenants/acme/limits', undefined, memberKey)).status).toBe(200);
  });

  it('hold what the runner gets: set keys at most the ceiling, unset keys at the ceiling where it is below the default', async () => {
    const created = await call('POST', '/api/profiles', { name: 'worker', runtime: 'general', model: 'demo:echo', limits: { cpus: 0.5 } }, acmeKey);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.limits).toEqual({ cpus: 0.5 }); // stored as asked
    expect(lastSent('acme', 'worker')?.limits).toEqual({ cpus: 0.5, memoryMiB: 512, pids: 64 });

    const session = await call('POST', '/api/sessions', { profile: 'worker' }, acmeKey);
    expect(session.status, JSON.stringify(session.body)).toBe(201);
    expect(lastSent('acme', 'worker', '/runner/sessions')?.limits).toEqual({ cpus: 0.5, memoryMiB: 512, pids: 64 });
  });

  it('apply to sessions created after a change, and the runners get the tenant\'s profiles again at once', async () => {
    const before = sent.length;
    expect((await call('PUT', '/api/tenants/acme/limits', { memoryMiB: 256, cpus: 0.25 })).status).toBe(200);
    const resent = sent.slice(before).filter((s) => s.tenant === 'acme' && s.path === '/runner/profiles');
    expect(resent.map((s) => s.body.profile?.name)).toEqual(['worker']);
    // pids is the operator's again (no longer sent); cpus 0.5 held to the new ceiling
    expect(resent[0].body.profile?.limits).toEqual({ cpus: 0.25, memoryMiB: 256 });

    expect((await call('POST', '/api/sessions', { profile: 'worker' }, acmeKey)).status).toBe(201);
    expect(lastSent('acme', 'worker', '/runner/sessions')?.limits).toEqual({ cpus: 0.25, memoryMiB: 256 });

    expect((await call('PUT', '/api/tenants/acme/limits', {})).body.limits).toEqual({});
    expect(lastSent('acme', 'worker')?.limits).toEqual({ cpus: 0.5 });
    expect((await call('PUT', '/api/tenants/acme/limits', { memoryMiB: 512, pids: 64 })).status).toBe(200);
  });
});

describe("a kit's profiles", () => {
  it("are not copied into a tenant whose ceilings their limits pass", async () => {
    // `hungry` (the operator tenant's, memoryMiB 1024) as a kit; acme's memory ceiling is 512
    const kit = await call('POST', '/api/templates', { slug: 'hungry-kit', label: 'Hungry', description: 'wants memory', source: { agent: 'hungry' } });
    expect(kit.status, JSON.stringify(kit.body)).toBe(201);
    const copy = await call('POST', '/api/templates/hungry-kit/copy', {}, acmeKey);
    expect(copy).toEqual({ status: 400, body: { error: "profiles.hungry.limits.memoryMiB: 1024 is above the tenant's ceiling 512" } });
    expect((await call('GET', '/api/profiles/hungry', undefined, acmeKey)).status).toBe(404);
  });
});

describe("a /v1 environment's config.limits", () => {
  const v1 = async (path: string, json: unknown, key = acmeKey) => {
    const res = await fetch(`${conductor.url}/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(json) });
    return { status: res.status, body: await res.json() };
  };
  const session = (limits: unknown) => v1('/agents/sessions', { agent: { model: 'svc/demo/echo' }, environment: { type: 'openai_hosted', config: { limits } } });

  it('are kept on the environment and become the limits of its session on the runner', async () => {
    const res = await session({ memory_mib: 256, wall_seconds: 120 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.environment).toMatchObject({ type: 'openai_hosted', config: { limits: { memory_mib: 256, wall_seconds: 120 } } });
    const info = await fetch(`${conductor.url}/v1/agents/environments/${res.body.environment.id}`, { headers: { authorization: `Bearer ${acmeKey}` } });
    expect(await info.json()).toMatchObject({ id: res.body.environment.id, config: { limits: { memory_mib: 256, wall_seconds: 120 } } });
    const profile = sent.filter((s) => s.tenant === 'acme' && s.path === '/runner/sessions').at(-1)?.body.profile;
    // the tenant's pids ceiling (64) is below the operator's default: it goes along
    expect(profile?.limits).toEqual({ memoryMiB: 256, wallSeconds: 120, pids: 64 });
  });

  it("are refused above the tenant's or the operator's ceiling, naming the snake_case key as the param", async () => {
    expect(await session({ memory_mib: 1024 })).toEqual({
      status: 400,
      body: { error: { message: "environment.config.limits.memory_mib: 1024 is above the tenant's ceiling 512", type: 'invalid_request_error', param: 'environment.config.limits.memory_mib', code: null } },
    });
    const operator = await session({ output_bytes: 1024 * 1024 * 2 });
    expect(operator.status).toBe(400);
    expect(operator.body.error.message).toBe("environment.config.limits.output_bytes: 2097152 is above the operator's ceiling 1048576");
  });

  it('refuses an unknown key, in snake_case or camelCase, and an unknown config field', async () => {
    const camel = await session({ memoryMiB: 256 });
    expect(camel.status).toBe(400);
    expect(camel.body.error.message).toMatch(/^environment\.config\.limits\.memoryMiB: unknown limit; allowed: memory_mib, cpus, pids, wall_seconds/);
    const field = await v1('/agents/sessions', { agent: { model: 'svc/demo/echo' }, environment: { type: 'openai_hosted', config: { cpu: 1 } } });
    expect(field.status).toBe(400);
    expect(field.body.error.message).toMatch(/^environment\.config\.cpu: unknown field; allowed: limits/);
  });
});

describe('what runners report of their limits', () => {
  it('keeps /api/topology 404 on a single-runner conductor (seed 001)', async () => {
    expect(await call('GET', '/api/topology')).toEqual({ status: 404, body: { error: 'topology is available on a multi-runner conductor' } });
  });

  it("names each runner's limits in the conductor's /readyz, as its info says them", async () => {
    const answer = await fetch(`${runner.url}/runner/info`, { headers: { 'x-svc-internal-token': `Bearer ${TOKEN}` } });
    expect(answer.status).toBe(200);
    const info = await answer.json();
    const res = await fetch(`${conductor.url}/readyz`);
    const body = await res.json();
    const check = body.checks.find((c: { name: string }) => c.name === `runner ${proxy.url}`);
    expect(check).toMatchObject({ ok: true });
    if (info.limits) expect(check.detail).toMatch(new RegExp(`^sandbox limits ${info.limits.mode}: `));
    else expect(check).not.toHaveProperty('detail');
  });
});

describe('/api/topology on two runners', () => {
  it("shows each runner's limits, as its GET /runner/info reports them (null from a runner without them)", async () => {
    runner2 = await startTestSvc({ SVC_INTERNAL_TOKEN: TOKEN, SVC_SANDBOX: 'off' }, 'runner');
    const two = await startTestSvc(
      { DATABASE_URL: db.url, SVC_RUNNERS: `${runner.url},${runner2.url}`, SVC_INTERNAL_TOKEN: TOKEN, AGENT_ORC_ADMIN_TENANT: 'default', AGENT_API_KEY_PEPPER: PEPPER },
      'conductor',
    );
    try {
      const res = await two.api('/api/topology');
      expect(res.status).toBe(200);
      const { runners } = (await res.json()) as { runners: Array<{ url: string; healthy: boolean; limits: unknown }> };
      expect(runners.map((r) => r.url)).toEqual([runner.url, runner2.url]);
      for (const r of runners) {
        const answer = await fetch(`${r.url}/runner/info`, { headers: { 'x-svc-internal-token': `Bearer ${TOKEN}` } });
        expect(answer.status).toBe(200);
        const info = await answer.json();
        expect(r.healthy).toBe(true);
        expect(r.limits).toEqual(info.limits ?? null);
      }
    } finally {
      await two.stop();
    }
  });
});
