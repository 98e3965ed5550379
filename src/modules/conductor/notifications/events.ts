import type { Kysely } from 'kysely';
import { withTenant, type DB, type Tx } from '../../../db/index.ts';
import type { Jobs } from '../jobs/index.ts';
import type { RunFinished } from '../hooks/index.ts';
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

export type RequestedNotification = Omit<NotificationInput, 'channel' | 'to'> & { event: 'automation.disabled' | 'workflow.paused' | 'credit.low' };

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
