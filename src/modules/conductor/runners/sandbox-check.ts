import { selectTools } from '../../../contracts/toolkit.ts';
import type { RunnerInfo } from '../../../contracts/runner.client.ts';
import { AppError } from '../../../shared/errors.ts';

/**
 * Profiles whose agents may run commands (`run_command`, e.g. through `@exec`) need a runner that can sandbox them.
 * A runner that reports its sandbox unavailable (bubblewrap missing, or unable to create namespaces) makes such a
 * profile a 400 naming the cause and the fix, unless its operator opted out (`mode: off`). Runners that report
 * nothing (older builds, or not probed yet) are not held against the profile. The error carries the runner and the
 * cause, so a caller whose users never named tools (a /v1 hosted environment) can word it for them.
 */
export class NoCommandSandbox extends AppError {
  readonly runner: string;
  readonly detail: string;
  constructor(runner: string, detail: string) {
    super(400, `tools: run_command needs the command sandbox, which runner ${runner} cannot provide: ${detail}`);
    this.runner = runner;
    this.detail = detail;
  }
}

export function assertCommandSandbox(runners: ReadonlyArray<RunnerInfo | undefined>, tools: readonly string[] | undefined): void {
  if (!selectTools(tools).has('run_command')) return;
  for (const info of runners) {
    const sandbox = info?.sandbox;
    if (sandbox && sandbox.mode === 'bwrap' && !sandbox.available) {
      throw new NoCommandSandbox(info.id, sandbox.detail);
    }
  }
}
