import type { RunsService } from '../../conductor/index.ts';
import type { ModelResolver } from '../models/model-ref.ts';
import { runtimeModelName } from './launch.ts';

/**
 * The run gates (billing's credit check) asked for a turn before anything is allocated: by session creation with
 * `input` (before the session exists) and by an input message that starts a turn, so the refusal (402) is the
 * request's answer instead of a turn that fails later. The turn's run asks the gates again when it starts.
 */
export async function gateTurn(
  deps: { conductor: { runs: Pick<RunsService, 'checkGates'> }; models: ModelResolver },
  tenantId: string,
  t: { model: string; profileName: string; sessionId: string | null },
): Promise<void> {
  const keySource = deps.models.parse(t.model).kind === 'byok' ? 'tenant' : 'platform';
  await deps.conductor.runs.checkGates({ tenantId, profile: t.profileName, parentId: null, sessionId: t.sessionId, runtime: 'general', model: runtimeModelName(deps.models, t.model), keySource });
}
