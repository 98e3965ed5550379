import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startAgentsHarness, type AgentsHarness } from '../support/agents.ts';
import { cli, spawnCli, tempDir } from '../support/cli.ts';
import { readUntil } from '../support/sse.ts';

/**
 * Tool permission policies and approvals (issue 40), through the real HTTP surface with the `general` runtime and the
 * fake model provider: a `deny` tool never runs, an `ask` tool waits (`approval_required`, the run `waiting`) until a
 * member decides (approve with an edited input, deny with a reason), or its approval expires.
 */
describe('tool permissions and approvals', () => {
  let h: AgentsHarness;
  let viewerKey: string;
  let otherKey: string;
  const api = (path: string, init?: Parameters<AgentsHarness['svc']['api']>[1]) => h.svc.api(path, init);
  const profile = (body: Record<string, unknown>) => api('/api/profiles', { method: 'POST', json: { runtime: 'general', model: 'openai-compatible:fake-model', tools: ['@files'], ...body } });
  const start = async (profileName: string, prompt: string, sessionId?: string) => {
    const res = await api('/api/runs', { method: 'POST', json: { profile: profileName, prompt, ...(sessionId ? { sessionId } : {}) } });
    expect(res.status).toBe(202);
    return (await res.json()) as { runId: string; sessionId: string };
  };

  /** The run's stream, read up to (and including) the first event of `type`; `rest()` reads it to its end. */
  const until = async (runId: string, type: string) => readUntil(await api(`/api/runs/${runId}/stream`), type);


  const write = (content: string) => `CALL_TOOL fs_write {"path":"/work/note.txt","content":"${content}"}`;

  beforeAll(async () => {
    h = await startAgentsHarness();
    viewerKey = await h.mintKey('default', 'viewer');
    otherKey = await h.otherOrg('elsewhere');
    expect((await profile({ name: 'denier', permissions: { '@files': 'allow', fs_write: 'deny' } })).status).toBe(201);
    expect((await profile({ name: 'asker', permissions: { fs_write: 'ask', '*': 'allow' } })).status).toBe(201);
    expect((await profile({ name: 'hasty', permissions: { fs_write: 'ask' }, approvalTimeoutSeconds: 1 })).status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  describe('validation', () => {
    it.each([
      [{ fs_wrte: 'ask' }, 'permissions.fs_wrte: unknown tool'],
      [{ '@exec': 'maybe' }, 'permissions.@exec: expected allow, ask or deny'],
      [{ '@nope': 'deny' }, 'permissions.@nope: unknown bundle'],
      [{ 'mcp:github/*': 'ask' }, "permissions.mcp:github/*: github is not one of the profile's MCP servers (it has none)"],
    ])('refuses %j with a 400 naming the selector', async (permissions, message) => {
      const res = await profile({ name: 'bad', permissions });
      expect(res.status).toBe(400);
      expect((await res.json()).error).toContain(message);
    });

    it('takes * deny on a profile with MCP servers (the gate sees their calls), and refuses an approval timeout below 1', async () => {
      const res = await profile({ name: 'strict', permissions: { '*': 'deny' }, mcpServers: [{ name: 'gh', url: 'http://127.0.0.1:9/mcp' }] });
      expect(res.status).toBe(201);
      expect((await profile({ name: 'bad', approvalTimeoutSeconds: 0 })).status).toBe(400);
    });

    it('keeps a valid policy on the profile', async () => {
      expect((await (await api('/api/profiles/denier')).json()).permissions).toEqual({ '@files': 'allow', fs_write: 'deny' });
    });
  });

  it('never runs a denied tool: the model reads that the policy denied it', async () => {
    const { runId } = await start('denier', write('nope'));
    const { rest } = await until(runId, 'tool_call');
    const events = await rest();
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ isError: true });
    expect(events.at(-1)).toMatchObject({ type: 'result', message: expect.stringContaining('tool fs_write denied by the permission policy of profile denier (fs_write: deny)') });
    expect(events.some((e) => e.type === 'approval_required')).toBe(false);
  });

  it('holds an ask tool until a member approves it, with an edited input, once', async () => {
    const { runId, sessionId } = await start('asker', write('original'));
    const { event, rest } = await until(runId, 'approval_required');
    expect(event).toMatchObject({ toolName: 'fs_write', input: { path: '/work/note.txt', content: 'original' }, approvalId: expect.stringMatching(/^apr_/), expiresAt: expect.any(String) });
    expect(event.toolCallId).toEqual(expect.any(String));
    // a general run parks while it waits (approvals-parked.test.ts): its approval waits SVC_APPROVAL_TIMEOUT_S, 24 h
    const left = Date.parse(String(event.expiresAt)) - Date.now();
    expect(left).toBeLessThanOrEqual(86_400_000);
    expect(left).toBeGreaterThan(86_000_000);
    const approvalId = event.approvalId as string;

    // the row was there before the event; the run shows as waiting wherever runs are listed
    expect((await (await api(`/api/runs/${runId}`)).json()).status).toBe('waiting');
    expect(((await (await api('/api/runs?status=waiting')).json()) as Array<{ id: string }>).map((r) => r.id)).toContain(runId);
    expect(((await (await api('/api/runs?status=running')).json()) as Array<{ id: string }>).map((r) => r.id)).not.toContain(runId);
    const pending = (await (await api('/api/approvals?status=pending')).json()) as Array<{ id: string; runId: string; status: string }>;
    expect(pending).toContainEqual(expect.objectContaining({ id: approvalId, runId, status: 'pending', toolName: 'fs_write' }));
    const stats = await (await api('/api/stats')).json();
    expect(stats.buckets.reduce((n: number, b: { waitingRuns: number }) => n + b.waitingRuns, 0)).toBeGreaterThanOrEqual(1);

    const decideAs = (key: string | undefined, body: unknown) => api(`/api/runs/${runId}/approvals/${approvalId}`, { method: 'POST', json: body, ...(key ? { key } : {}) });
    expect((await decideAs(viewerKey, { decision: 'approve' })).status).toBe(403);
    expect((await decideAs(otherKey, { decision: 'approve' })).status).toBe(404);
    expect((await decideAs(undefined, { decision: 'maybe' })).status).toBe(400);
    const approved = await decideAs(undefined, { decision: 'approve', message: 'with my words', input: { path: '/work/note.txt', content: 'edited' } });
    expect(approved.status).toBe(200);
    expect(await approved.json()).toMatchObject({ id: approvalId, status: 'approved', delivered: true, message: 'with my words' });
    const again = await decideAs(undefined, { decision: 'deny' });
    expect(again.status).toBe(409);
    expect((await again.json()).error).toBe(`approval ${approvalId} is already approved`);

    const events = await rest();
    expect(events.find((e) => e.type === 'approval_decided')).toMatchObject({ type: 'approval_decided', approvalId, decision: 'approve', message: 'with my words', input: { content: 'edited' } });
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ isError: false });
    expect(events.filter((e) => e.type === 'result' || e.type === 'error')).toHaveLength(1);
    expect((await (await api(`/api/runs/${runId}`)).json()).status).toBe('ok');

    // the tool ran with the edited input
    const read = await start('asker', 'CALL_TOOL fs_read {"path":"/work/note.txt"}', sessionId);
    const { rest: readRest } = await until(read.runId, 'tool_call');
    expect((await readRest()).at(-1)).toMatchObject({ type: 'result', message: expect.stringContaining('edited') });
  });

  it('tells the model a person denied the call, with their reason, and the run goes on', async () => {
    const { runId } = await start('asker', write('denied'));
    const { event, rest } = await until(runId, 'approval_required');
    const res = await api(`/api/runs/${runId}/approvals/${event.approvalId}`, { method: 'POST', json: { decision: 'deny', message: 'not on a Friday' } });
    expect(res.status).toBe(200);
    const events = await rest();
    expect(events.find((e) => e.type === 'approval_decided')).toMatchObject({ type: 'approval_decided', decision: 'deny', reason: 'denied', message: 'not on a Friday' });
    expect(events.at(-1)).toMatchObject({ type: 'result', message: expect.stringContaining('tool fs_write was not run: a person denied it: not on a Friday') });
    expect((await (await api(`/api/approvals/${event.approvalId}`)).json())).toMatchObject({ status: 'denied', decidedBy: expect.any(String) });
  });

  it('counts an unanswered approval as denied, reason expired', async () => {
    const { runId } = await start('hasty', write('late'));
    const { event, rest } = await until(runId, 'approval_required');
    const events = await rest();
    expect(events.find((e) => e.type === 'approval_decided')).toMatchObject({ type: 'approval_decided', approvalId: event.approvalId, decision: 'deny', reason: 'expired' });
    expect(events.at(-1)).toMatchObject({ type: 'result', message: expect.stringContaining('the approval expired') });
    expect((await (await api(`/api/approvals/${event.approvalId}`)).json()).status).toBe('expired');
    expect((await api(`/api/runs/${runId}/approvals/${event.approvalId}`, { method: 'POST', json: { decision: 'approve' } })).status).toBe(409);
  });

  describe('signals and the CLI', () => {
    let receiver: Server;
    const bodies: Array<{ type: string; data: any }> = [];
    const waiters: Array<() => void> = [];
    const arrived = (type: string) =>
      new Promise<{ type: string; data: any }>((resolve) => {
        const check = () => {
          const hit = bodies.find((b) => b.type === type);
          if (hit) resolve(hit);
          else waiters.push(check);
        };
        check();
      });
    beforeAll(async () => {
      receiver = createServer((req, res) => {
        let body = '';
        req.on('data', (d) => (body += d));
        req.on('end', () => {
          bodies.push(JSON.parse(body));
          res.writeHead(204).end();
          for (const w of waiters.splice(0)) w();
        });
      });
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      expect((await api('/api/webhooks', { method: 'POST', json: { url, events: ['run.approval_required'] } })).status).toBe(201);
    });
    afterAll(async () => {
      await new Promise<void>((r) => (receiver ? (receiver.closeAllConnections(), receiver.close(() => r())) : r()));
    });

    it('sends run.approval_required and a notification when a run starts waiting, and the CLI lists and decides', async () => {
      const { runId } = await start('asker', write('from the cli'));
      const { event, rest } = await until(runId, 'approval_required');
      const hook = await arrived('run.approval_required');
      expect(hook.data).toMatchObject({ runId, profile: 'asker', approval: { id: event.approvalId, toolName: 'fs_write', status: 'pending' } });
      // the notification is produced by its queue's job, requested in the transaction that wrote the approval
      await vi.waitFor(async () => {
        const notes = (await (await api('/api/notifications')).json()) as Array<{ event: string; runId: string; message: string }>;
        expect(notes).toContainEqual(expect.objectContaining({ event: 'run.approval_required', runId, message: expect.stringContaining(`svc approve ${event.approvalId}`) }));
      }, { timeout: 15_000, interval: 200 });

      const env = { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: h.svc.url, SVC_API_KEY: h.svc.key };
      expect((await cli(['runs', '--status', 'waiting'], env)).stdout).toMatch(new RegExp(`^${runId}\\twaiting\\tasker`, 'm'));
      const listed = await cli(['approvals'], env);
      expect(listed.stdout).toContain(`${event.approvalId}\tpending\t${runId}\tfs_write`);
      const denied = await cli(['approve', String(event.approvalId), '--deny', '--message', 'use the other file', '--json'], env);
      expect(denied.json()).toMatchObject({ id: event.approvalId, status: 'denied', message: 'use the other file', delivered: true });
      expect((await rest()).at(-1)).toMatchObject({ type: 'result', message: expect.stringContaining('a person denied it: use the other file') });
      expect((await cli(['approvals'], env)).stdout).not.toContain(String(event.approvalId));
    });
  });

  it('svc run shows the waiting call and, off a terminal, the command that decides it', async () => {
    const env = { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: h.svc.url, SVC_API_KEY: h.svc.key };
    const run = spawnCli(['run', 'asker', write('via svc run')], env);
    const [, approvalId] = await run.waitFor('stderr', /decide with: svc approve (apr_\w+) \[--deny\]/);
    expect(run.stderr()).toContain(`fs_write {"path":"/work/note.txt","content":"via svc run"} waits for approval ${approvalId}`);
    expect((await cli(['approve', approvalId!], env)).code).toBe(0);
    expect((await run.exited).code).toBe(0);
    expect(run.stderr()).toContain(`approval ${approvalId}: approved`);
  });

  it('cancels what a cancelled run left pending', async () => {
    const { runId } = await start('asker', write('cancel me'));
    const { event, rest } = await until(runId, 'approval_required');
    expect((await api(`/api/runs/${runId}`, { method: 'DELETE' })).status).toBe(204);
    await rest();
    expect((await (await api(`/api/approvals/${event.approvalId}`)).json()).status).toBe('cancelled');
  });
});
