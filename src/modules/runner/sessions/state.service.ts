import { CallError } from '../../../contracts/http-client.ts';
import type { HydrateRequest } from '../../../contracts/runner.wire.ts';
import { stateContentType } from '../../../contracts/worker.ts';
import type { StateBundle } from '../../../contracts/worker.client.ts';
import { AppError, badRequest, conflict, describeError, notFound, unavailable } from '../../../shared/errors.ts';
import { CLIENT_ID_PATTERN } from '../../../shared/ids.ts';
import { isSandboxSession, requireProfile, sandboxOwner, type SessionsDeps } from './sessions.service.ts';
import type { SessionRecord } from './sessions.store.ts';

/**
 * Moving a session's runtime state in and out of this runner: export reads the bundle from the session's worker (for
 * the conductor to keep a durable copy); hydrate recreates a session here from such a copy.
 */
export interface StateDeps extends SessionsDeps {
  stateCapBytes: number;
}

export async function exportState(deps: StateDeps, rec: SessionRecord): Promise<StateBundle> {
  if (isSandboxSession(rec)) {
    // the worker uploads its bundle after every run and on export_state: the latest one is here
    const bundle = deps.sandboxWorkers.state(rec.id);
    if (!bundle) throw notFound(`no state for session ${rec.id}`);
    if (bundle.bytes.byteLength > deps.stateCapBytes) throw new AppError(500, `state bundle is over the size cap (${deps.stateCapBytes} bytes)`);
    return { ...bundle, runtimeSessionId: bundle.runtimeSessionId || rec.runtimeSessionId };
  }
  const { endpoint } = deps.slots.slot(rec.runtime);
  if (!endpoint) throw new AppError(500, `state export failed: no worker configured for runtime ${rec.runtime}`);
  let bundle: StateBundle | undefined;
  try {
    bundle = await endpoint.client.exportState(rec.id, rec.runtime, { maxBytes: deps.stateCapBytes });
  } catch (err) {
    if (err instanceof CallError && err.status === 413) throw new AppError(500, `state bundle is over the size cap (${deps.stateCapBytes} bytes)`);
    if (err instanceof CallError && err.status === undefined) endpoint.recordFailure(err);
    throw new AppError(500, `state export failed: ${describeError(err)}`);
  }
  if (!bundle) throw notFound(`no state for session ${rec.id}`);
  return { ...bundle, runtimeSessionId: bundle.runtimeSessionId || rec.runtimeSessionId };
}

/**
 * Idempotent: an absent (or shut-down) session is created under `sessionId` with the named profile; a live one keeps
 * its profile snapshot. The bundle is imported before the record changes, so a failed import leaves nothing half-made.
 */
export async function hydrate(deps: StateDeps, tenant: string, sessionId: string, body: HydrateRequest): Promise<void> {
  if (!CLIENT_ID_PATTERN.test(sessionId)) throw badRequest('invalid session id');
  if (deps.sessions.ownedByOther(tenant, sessionId)) throw notFound(`unknown session: ${sessionId}`);
  const profile = requireProfile(deps, tenant, body.profileName);
  const sandboxOf = sandboxOwner(deps, tenant, body.sandboxOf);
  const live = deps.sessions.find(tenant, sessionId);
  const existing = live && live.status !== 'shutdown' ? live : undefined;
  if (existing?.status === 'running') throw conflict('session busy');
  const bytes = body.stateB64 ? decodeBundle(body.stateB64, deps.stateCapBytes) : undefined;
  const runtime = existing?.runtime ?? profile.runtime;
  const runtimeSessionId = body.runtimeSessionId ?? '';

  const sandboxed = existing ? isSandboxSession(existing) : profile.workerMode === 'sandbox';
  if (bytes && sandboxed) {
    // where the session's next sandbox worker starts from (written before the record changes, like an import)
    await deps.sandboxWorkers.hydrate({ id: sessionId, runtime }, { bytes, contentType: body.stateContentType || stateContentType(runtime), runtimeSessionId });
  } else if (bytes) {
    const { endpoint } = deps.slots.slot(runtime);
    if (!endpoint) throw unavailable(`cannot hydrate state: no worker configured for runtime ${runtime}`);
    try {
      await endpoint.client.importState(sessionId, runtime, bytes, body.stateContentType || stateContentType(runtime), runtimeSessionId);
    } catch (err) {
      if (err instanceof CallError && err.status !== undefined && err.status < 500) throw badRequest(`state import rejected: ${err.message}`);
      if (err instanceof CallError && err.status === undefined) endpoint.recordFailure(err);
      throw new AppError(502, `state import failed: ${describeError(err)}`);
    }
  }

  if (existing) {
    if (runtimeSessionId) existing.runtimeSessionId = runtimeSessionId;
    return;
  }
  deps.sessions.create(tenant, sessionId, profile, runtimeSessionId, sandboxOf);
  deps.metrics.sessionCreated();
}

/** Strict base64: the canonical alphabet with padding, nothing else; the size is checked before decoding. */
export function decodeBundle(b64: string, capBytes: number): Uint8Array {
  if (b64.length % 4 !== 0) throw badRequest('stateB64: not valid base64 (length is not a multiple of 4)');
  const padding = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  const size = (b64.length / 4) * 3 - padding;
  if (size > capBytes) throw new AppError(413, `state bundle is over the size cap (${size} > ${capBytes} bytes)`);
  const bytes = Buffer.from(b64, 'base64');
  // Node's decoder skips junk silently; re-encoding must give back the input exactly, or the input was not base64
  if (bytes.toString('base64') !== b64) throw badRequest('stateB64: not valid base64');
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
