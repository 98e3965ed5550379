import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTenant } from '../../src/db/index.ts';
import { readSse } from '../support/sse.ts';
import { startTestSvc, type TestSvc } from '../support/svc.ts';

/**
 * Sessions as a resource of their own (seed 000, "Sessions", variant B): created for a profile without a run, listed
 * 200 at a time with X-Total-Count and the `profile` and `group` filters, grouped into the session rail by last use,
 * and the VFS lease's 404 for a session nobody knows.
 */
describe('sessions', () => {
  let svc: TestSvc;
  const db = () => svc.server.built.database!.db;
  /** Moves a session's last use back by `days` (what days of disuse look like). */
  const age = (id: string, days: number) => withTenant(db(), 'default', (tx) => sql`update sessions set last_used_at = now() - make_interval(days => ${days}) where id = ${id}`.execute(tx));
  const open = async (profile: string) => {
    const res = await svc.api('/api/sessions', { method: 'POST', json: { profile } });
    expect(res.status).toBe(201);
    return (await res.json()) as { sessionId: string; id: string; profile: string; status: string; runCount: number };
  };
  const list = async (query: string) => {
    const res = await svc.api(`/api/sessions${query}`);
    expect(res.status).toBe(200);
    return { total: res.headers.get('x-total-count'), ids: ((await res.json()) as Array<{ id: string }>).map((s) => s.id) };
  };

  beforeAll(async () => {
    svc = await startTestSvc({}, 'all');
    for (const name of ['demo', 'demo-2']) expect((await svc.api('/api/profiles', { method: 'POST', json: { name, runtime: 'general', model: 'demo:echo' } })).status).toBe(201);
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('creates a session bound to a profile, with no run, which a run then continues', async () => {
    const session = await open('demo');
    expect(session).toMatchObject({ sessionId: expect.stringMatching(/^sess-[0-9a-f]{8}-/), profile: 'demo', origin: 'api', status: 'idle', runCount: 0, lastRunStatus: null });
    expect(session.id).toBe(session.sessionId);
    expect(await (await svc.api(`/api/sessions/${session.id}/runs`)).json()).toEqual([]);
    expect(await (await svc.api(`/api/sessions/${session.id}`)).json()).toMatchObject({ id: session.id, status: 'idle', runCount: 0 });

    const run = await svc.api('/api/runs', { method: 'POST', json: { profile: 'demo', sessionId: session.id, prompt: 'first words' } });
    expect(run.status).toBe(202);
    const { runId, sessionId } = (await run.json()) as { runId: string; sessionId: string };
    expect(sessionId).toBe(session.id);
    expect((await readSse(await svc.api(`/api/runs/${runId}/stream`))).at(-1)!.event).toMatchObject({ type: 'result', message: 'demo reply: first words' });
    expect(await (await svc.api(`/api/sessions/${session.id}`)).json()).toMatchObject({ status: 'idle', runCount: 1, lastRunStatus: 'ok', lastPrompt: 'first words' });
    // bound to its profile: another profile's run is refused
    expect((await svc.api('/api/runs', { method: 'POST', json: { profile: 'demo-2', sessionId: session.id } })).status).toBe(409);
  });

  it('refuses an unknown profile or a body without one, creating nothing', async () => {
    const before = await list('');
    const unknown = await svc.api('/api/sessions', { method: 'POST', json: { profile: 'nope' } });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toEqual({ error: 'unknown_profile: nope' });
    const missing = await svc.api('/api/sessions', { method: 'POST', json: {} });
    expect(missing.status).toBe(400);
    expect((await missing.json()).error).toMatch(/^profile: /);
    expect(await list('')).toEqual(before);
  });

  it('lists sessions with X-Total-Count always, filtered by exact profile, and by rail group within the page', async () => {
    const a = await open('demo');
    const b = await open('demo-2');
    await age(a.id, 3);
    const all = await list('');
    expect(all.total).toBe(String(all.ids.length)); // no limit asked: the default page of 200, counted
    expect(all.ids).toEqual(expect.arrayContaining([a.id, b.id]));

    const demo = await list('?profile=demo');
    expect(demo.ids).toContain(a.id);
    expect(demo.ids).not.toContain(b.id); // exact, not a substring as q is
    expect(demo.total).toBe(String(demo.ids.length));
    expect((await list('?q=demo')).ids).toEqual(expect.arrayContaining([a.id, b.id]));
    expect(await list('?profile=demo-2')).toEqual({ total: '1', ids: [b.id] });

    // the group filter applies after paging: the page holds what it holds, the count is still the whole list's
    expect(await list('?group=previous_7_days')).toEqual({ total: all.total, ids: [a.id] });
    expect((await list('?group=today')).ids).not.toContain(a.id);
    const bad = await svc.api('/api/sessions?group=someday');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: 'group: one of today, yesterday, previous_7_days, previous_30_days, older' });
  });

  it('groups the session rail by last use, newest first, leaving out sessions that were shut down', async () => {
    const yesterday = await open('demo-2');
    const old = await open('demo-2');
    const gone = await open('demo-2');
    const recent = await open('demo-2');
    await age(yesterday.id, 1);
    await age(old.id, 45);
    expect((await svc.api(`/api/sessions/${gone.id}`, { method: 'DELETE' })).status).toBe(204);

    const res = await svc.api('/api/sessions/rail?profile=demo-2');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-total-count')).toBe('4'); // the earlier demo-2 session and three of these
    const rail = (await res.json()) as { timeZone: string; groups: Array<{ group: string; label: string; sessions: Array<{ id: string }> }> };
    expect(rail.timeZone).toBe('UTC');
    expect(rail.groups.map((g) => [g.group, g.label, g.sessions.length])).toEqual([
      ['today', 'Today', 2],
      ['yesterday', 'Yesterday', 1],
      ['older', 'Older', 1],
    ]);
    expect(rail.groups[0].sessions[0].id).toBe(recent.id); // last used first
    expect(rail.groups.flatMap((g) => g.sessions.map((s) => s.id))).not.toContain(gone.id);
    expect(rail.groups[1].sessions[0].id).toBe(yesterday.id);
    expect(rail.groups[2].sessions[0].id).toBe(old.id);

    expect((await (await svc.api('/api/sessions/rail?profile=demo-2&tz=Pacific/Kiritimati')).json()).timeZone).toBe('Pacific/Kiritimati');
    const bad = await svc.api('/api/sessions/rail?tz=Mars/Olympus');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: 'tz: an IANA timezone such as Europe/Paris, got "Mars/Olympus"' });
  });

  it("answers a VFS lease of a session nobody knows with the runner's 404 text", async () => {
    const res = await svc.api('/api/sessions/sess-00000000-nobody/vfs');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'no vfs session' });
    const known = await open('demo');
    const lease = await svc.api(`/api/sessions/${known.id}/vfs`);
    expect(lease.status).toBe(200);
    expect(await lease.json()).toMatchObject({ sessionId: known.id });
  });
});
