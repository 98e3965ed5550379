import type { Kysely } from 'kysely';
import { withTenant, type DB, type Tx } from '../../../db/index.ts';
import { APPROVAL_HOLD_MAX_S, type Approval, type ApprovalDecisionBody, type ApprovalRequest, type ApprovalTicket, type HeldDecision } from '../../../contracts/approvals.ts';
import { badRequest, conflict, describeError, forbidden, notFound } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import type { Logger } from '../../../shared/log.ts';
import type { Principal } from '../identity/index.ts';
import type { Jobs } from '../jobs/index.ts';
import { emitEvent, requestNotification } from '../notifications/index.ts';
import type { Fleet } from '../runners/fleet.ts';
import { chatApprovalsOfRun } from '../publishing/index.ts';
import { getRun, getRunProfile } from '../runs/runs.repo.ts';
import { queueResume } from '../runs/parking.ts';
import { isParkedOn } from '../runs/parking.repo.ts';
import { getApproval, insertApproval, settleApproval } from './approvals.repo.ts';

/**
 * Approvals on the conductor: the pending row a runner asks for (before it shows `approval_required`), a person's
 * decision (once: a second one is 409), and the expiry job (a denial, reason `expired`). A decision on a parked run
 * queues its resume in the decision's own transaction (runs/parking.ts); any other is delivered to the runner holding
 * the call (contracts/approvals.ts). The row is the truth: a decision whose delivery fails (the runner restarted)
 * stays recorded, and the run, whose held call went with the runner, ends as its runner's runs do.
 */
export interface ApprovalDeps {
  db: Kysely<DB>;
  jobs: Jobs;
  fleet: Fleet;
  log: Logger;
  /** SVC_APPROVAL_TIMEOUT_S. */
  timeoutSeconds: number;
}

/** The approvals' dependencies from the conductor's (the feature and the /v1 turn engine share them). */
export function approvalDepsOf(c: {
  db: Kysely<DB>;
  jobs: Jobs;
  fleet: Fleet;
  log: Logger;
  config: { approvalTimeoutSeconds: number };
}): ApprovalDeps {
  return { db: c.db, jobs: c.jobs, fleet: c.fleet, log: c.log.child('approvals'), timeoutSeconds: c.config.approvalTimeoutSeconds };
}

export const EXPIRE_QUEUE = 'approvals.expire';

/** What the model reads when a published agent's chat run calls an `ask` tool and its agent says `approvals: "deny"`. */
export const END_USERS_CANNOT_APPROVE = 'the end users of this published agent cannot approve tool calls, and its owner did not choose to approve them (publish with approvals: "owner")';
export interface ExpireJob {
  tenantId: string;
  approvalId: string;
}

/** The run a run token names, or 403: only a run's own tools ask for approvals. */
function runOfToken(p: Principal): string {
  const runId = p.authKind === 'run_token' && p.subject?.startsWith('run:') ? p.subject.slice(4) : undefined;
  if (!runId) throw forbidden("approvals are requested by a run's tools (with its run token)");
  return runId;
}

export async function requestApproval(deps: ApprovalDeps, p: Principal, body: ApprovalRequest): Promise<ApprovalTicket> {
  const runId = runOfToken(p);
  const tenantId = p.tenantId;
  return withTenant(deps.db, tenantId, async (tx) => {
    const run = await getRun(tx, runId);
    if (!run) throw notFound(`unknown run: ${runId}`);
    if (run.status !== 'running') throw conflict(`run ${runId} is ${run.status}, not running`);
    // a published agent's chat run: its end users cannot approve, so only `approvals: "owner"` lets the run wait
    if ((await chatApprovalsOfRun(tx, runId)) === 'deny') throw forbidden(END_USERS_CANNOT_APPROVE);
    const profileName = String(run.sub_task.profile ?? '');
    const profile = await getRunProfile(tx, profileName, run.session_id);
    const spec = (profile?.snapshot ?? profile?.spec) as { approvalTimeoutSeconds?: number } | undefined;
    // a parked run waits its whole timeout; a call held on its runner never past the hold bound
    const timeout = spec?.approvalTimeoutSeconds ?? deps.timeoutSeconds;
    const seconds = body.park ? timeout : Math.min(timeout, APPROVAL_HOLD_MAX_S);
    const approval = await insertApproval(tx, {
      id: prefixedId('apr'),
      tenantId,
      runId,
      sessionId: run.session_id,
      toolCallId: body.toolCallId ?? null,
      toolName: body.toolName,
      input: body.input ?? {},
      expiresAt: new Date(Date.now() + seconds * 1000),
    });
    await deps.jobs.send<ExpireJob>(EXPIRE_QUEUE, { tenantId, approvalId: approval.id }, { startAfter: new Date(approval.expiresAt), tx });
    await emitEvent(deps.jobs, tx, {
      tenantId,
      type: 'run.approval_required',
      data: { runId, sessionId: run.session_id, profile: profileName, approval },
      key: `run.approval_required:${approval.id}`,
    });
    await requestNotification(deps.jobs, tx, {
      tenantId,
      event: 'run.approval_required',
      subject: `svc: run ${runId} waits for your approval`,
      message: `Run ${runId} of profile ${profileName} wants to call ${body.toolName} and waits for a decision until ${approval.expiresAt}.\n\nApprove: svc approve ${approval.id}\nDeny: svc approve ${approval.id} --deny`,
      runId,
      ownWebhook: true,
    });
    return { approvalId: approval.id, expiresAt: approval.expiresAt };
  });
}

export async function getOne(deps: ApprovalDeps, tenantId: string, id: string): Promise<Approval> {
  const found = await withTenant(deps.db, tenantId, (tx) => getApproval(tx, id));
  if (!found) throw notFound(`unknown approval: ${id}`);
  return found;
}

/** A person's decision (members and above; viewers are refused before this). */
export async function decide(deps: ApprovalDeps, p: Principal, runId: string, id: string, body: ApprovalDecisionBody): Promise<Approval & { delivered: boolean }> {
  if (body.decision === 'deny' && body.input !== undefined) throw badRequest('input: an edited input goes with approve only');
  const { settled, resumed } = await withTenant(deps.db, p.tenantId, async (tx) => {
    const found = await getApproval(tx, id);
    if (!found || found.runId !== runId) throw notFound(`unknown approval: ${id} (run ${runId})`);
    if (found.status !== 'pending') throw conflict(`approval ${id} is already ${found.status}`);
    const done = await settleApproval(tx, id, { status: body.decision === 'approve' ? 'approved' : 'denied', message: body.message, input: body.input, decidedBy: actorOf(p) });
    if (!done) throw conflict(`approval ${id} was decided meanwhile`);
    return { settled: done, resumed: await resumeIfParked(deps, tx, p.tenantId, done) };
  });
  if (resumed) return { ...settled, delivered: true };
  const delivered = await deliver(deps, p.tenantId, settled, {
    decision: body.decision,
    ...(body.decision === 'deny' ? { reason: 'denied' } : {}),
    ...(body.message ? { message: body.message } : {}),
    ...(body.input ? { input: body.input } : {}),
  });
  return { ...settled, delivered };
}

/** The expiry job: a still-pending approval counts as denied, reason `expired`. */
export async function expire(deps: ApprovalDeps, job: ExpireJob): Promise<void> {
  const found = await withTenant(deps.db, job.tenantId, async (tx) => {
    const settled = await settleApproval(tx, job.approvalId, { status: 'expired', decidedBy: null });
    return settled ? { settled, resumed: await resumeIfParked(deps, tx, job.tenantId, settled) } : undefined;
  });
  if (found && !found.resumed) await deliver(deps, job.tenantId, found.settled, { decision: 'deny', reason: 'expired' });
}

/**
 * In the decision's transaction, after its row lock: a run parked on this approval is resumed by a job queued here
 * (runs/parking.ts). A run still parking sees the decision when it marks itself parked, and queues the resume then.
 */
async function resumeIfParked(deps: ApprovalDeps, tx: Tx, tenantId: string, a: Approval): Promise<boolean> {
  if (!(await isParkedOn(tx, a.runId, a.id))) return false;
  await queueResume(deps.jobs, tx, { tenantId, runId: a.runId, approvalId: a.id });
  return true;
}

/** Hands the decision to the runner that holds the call; false when none holds it any longer. */
async function deliver(deps: ApprovalDeps, tenantId: string, a: Approval, decision: HeldDecision): Promise<boolean> {
  const runner = deps.fleet.ownerOfSessionId(a.sessionId);
  if (!runner) {
    deps.log.warn('no runner holds the approved call', { approvalId: a.id, sessionId: a.sessionId });
    return false;
  }
  try {
    return await runner.client.deliverApproval(tenantId, a.sessionId, a.id, decision);
  } catch (err) {
    deps.log.warn('delivering an approval decision failed', { approvalId: a.id, error: describeError(err) });
    return false;
  }
}

function actorOf(p: Principal): string {
  return p.keyId ? `key:${p.keyId}` : (p.subject ?? p.authKind);
}
