import type { Kysely } from 'kysely';
import { withTenant, type DB, type Tx } from '../../../db/index.ts';
import type { Jobs } from '../jobs/index.ts';
import { readRunFinished, type RunFinished, type RunRecorded } from '../hooks/index.ts';
import { subscribes } from './catalogue.ts';
import { enabledEndpoints, type EndpointsAhead } from './endpoints.repo.ts';
import { emitTo } from './outbox.ts';
import { hasRunNotification, lastRunError } from './notifications.repo.ts';
import { notifyIn, type NotificationInput, type NotifyDeps } from './notify.service.ts';

/**
 * What produces notifications besides the `notify` tool. Other features do not call this one: they publish
 * `NOTIFICATION_REQUESTED` on the job queue inside their own transaction (`requestNotification`), so a notification
 * exists exactly when what it reports is durable, and notifications' insides stay here. Run failures come from the
 * runFinished hook.
 */
export const NOTIFICATION_REQUESTED = 'notification.requested';
export const REQUESTED_QUEUE = 'notifications.requested';

export type RequestedNotification = Omit<NotificationInput, 'channel' | 'to'> & { event: 'automation.disabled' | 'workflow.paused' | 'credit.low' | 'run.approval_required' };

/** For other features: asks for a notification, inside `tx` (it is produced iff `tx` commits). */
export function requestNotification(jobs: Jobs, tx: Tx, n: RequestedNotification): Promise<void> {
  return jobs.publish(NOTIFICATION_REQUESTED, n, { tx });
}

/** The queue handler of requested notifications. */
export async function produceRequested(deps: NotifyDeps, n: RequestedNotification): Promise<void> {
  await withTenant(deps.db, n.tenantId, (tx) => notifyIn(deps, tx, n));
}

/** The `notifications` runFinished subscriber: a failed top-level run notifies once (hooks deliver at least once). */
export async function onRunFinished(deps: NotifyDeps & { db: Kysely<DB> }, ev: RunFinished): Promise<void> {
  if (ev.status !== 'error' || ev.parentId !== null) return;
  await withTenant(deps.db, ev.tenantId, async (tx) => {
    if (await hasRunNotification(tx, 'run.failed', ev.runId)) return;
    const error = await lastRunError(tx, ev.runId);
    await notifyIn(deps, tx, {
      tenantId: ev.tenantId,
      event: 'run.failed',
      subject: `svc: run ${ev.runId} of ${ev.profile} failed`,
      message: `Run ${ev.runId} of profile ${ev.profile} (session ${ev.sessionId}) failed at ${ev.finishedAt}.${error ? `\n\nError: ${error}` : ''}`,
      runId: ev.runId,
    });
  });
}

/**
 * run.started and session.created, inside the transaction that creates the run (hooks.runRecorded); `ahead`: the
 * tenant's endpoints as read with the run's profile just before.
 */
export async function onRunStarted(deps: Pick<NotifyDeps, 'jobs'>, tx: Tx, run: RunRecorded, ahead?: EndpointsAhead): Promise<void> {
  const endpoints = await enabledEndpoints(tx, run.tenantId, ahead);
  if (endpoints.length === 0) return;
  const data = { runId: run.runId, sessionId: run.sessionId, profile: run.profile, parentId: run.parentId, origin: run.origin };
  const take = (type: string) => endpoints.filter((e) => subscribes(e.events, type));
  if (run.newSession) await emitTo(deps.jobs, tx, { tenantId: run.tenantId, type: 'session.created', data: { sessionId: run.sessionId, profile: run.profile, runId: run.runId }, key: `session.created:${run.sessionId}` }, take('session.created'));
  await emitTo(deps.jobs, tx, { tenantId: run.tenantId, type: 'run.started', data, key: `run.started:${run.runId}` }, take('run.started'));
}

const ENDED = { ok: 'run.completed', cancelled: 'run.cancelled' } as const;

/**
 * run.completed and run.cancelled, inside the transaction that ends the run (hooks.runFinished: tenant or system
 * scope). A run that ends in error is `run.failed`, the notification (onRunFinished above); an interrupted one is
 * neither (its conductor died; the orphan sweep ends it).
 */
export async function onRunEnded(deps: Pick<NotifyDeps, 'jobs'>, tx: Tx, tenantId: string, runId: string, ahead?: EndpointsAhead): Promise<void> {
  const endpoints = (await enabledEndpoints(tx, tenantId, ahead)).filter((e) => subscribes(e.events, 'run.completed') || subscribes(e.events, 'run.cancelled'));
  if (endpoints.length === 0) return;
  const run = await readRunFinished(tx, tenantId, runId);
  const type = run && (ENDED as Record<string, (typeof ENDED)[keyof typeof ENDED]>)[run.status];
  if (!run || !type) return;
  const { tenantId: _t, runId: _r, ...facts } = run;
  await emitTo(deps.jobs, tx, { tenantId, type, data: { runId, ...facts }, key: `${type}:${runId}` }, endpoints.filter((e) => subscribes(e.events, type)));
}
