import type { ClientEnv } from '../env.ts';

/** The default label of a minted key: `<prefix>-<user>@<host>`, prefix the coding agent, `ci`, `ssh`, or `cli`. */
export function defaultLabel(env: Pick<ClientEnv, 'agent' | 'ci' | 'ssh' | 'user' | 'host'>): string {
  const prefix = env.agent ?? (env.ci ? 'ci' : env.ssh ? 'ssh' : 'cli');
  return `${prefix}-${env.user}@${env.host}`.slice(0, 200);
}

export type Flow = 'token' | 'device' | 'browser';

/**
 * Flow choice (seed 001): --with-token; then the device flow when a headless flag is given, stdin or stdout is not a
 * terminal, or a CI, SSH or coding-agent environment is detected; else the browser loopback. `--browser` forces the
 * browser flow anyway (scripted tests of it, or a terminal inside SSH with a forwarded port).
 */
export function chooseFlow(
  flags: { withToken?: string; headless?: boolean; browserless?: boolean; browser?: boolean },
  env: Pick<ClientEnv, 'stdinTTY' | 'stdoutTTY' | 'ci' | 'ssh' | 'agent'>,
): Flow {
  if (flags.withToken !== undefined) return 'token';
  if (flags.headless || flags.browserless || flags.browser === false) return 'device';
  if (flags.browser === true) return 'browser';
  if (!env.stdinTTY || !env.stdoutTTY || env.ci || env.ssh || env.agent) return 'device';
  return 'browser';
}
