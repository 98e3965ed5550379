import { selectTools } from '../../../contracts/toolkit.ts';
import type { RunnerInfo } from '../../../contracts/runner.client.ts';
import { badRequest } from '../../../shared/errors.ts';

/**
 * Profiles whose agents may run commands (`run_command`, e.g. through `@exec`) need a runner that can sandbox them.
 * A runner that reports its sandbox unavailable (bubblewrap missing, or unable to create namespaces) makes such a
 * profile a 400 naming the cause and the fix, unless its operator opted out (`mode: off`). Runners that report
 * nothing (older builds, or not probed yet) are not held against the profile.
 */
export function assertCommandSandbox(runners: ReadonlyArray<RunnerInfo | undefined>, tools: readonly string[] | undefined): void {
  if (!selectTools(tools).has('run_command')) return;
  for (const info of runners) {
    const sandbox = info?.sandbox;
    if (sandbox && sandbox.mode === 'bwrap' && !sandbox.available) {
      throw badRequest(`tools: run_command needs the command sandbox, which runner ${info.id} cannot provide: ${sandbox.detail}`);
    }
  }
}
