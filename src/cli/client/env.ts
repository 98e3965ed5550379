import { homedir, hostname, userInfo } from 'node:os';
import { join } from 'node:path';

/**
 * Everything the `svc` client reads from its environment, read once here and passed down. (The server's settings are
 * read by `loadConfig` in src/config; the client never looks at them.)
 */
export interface ClientEnv {
  /** Where config.json lives: $SVC_CONFIG_DIR, else $XDG_CONFIG_HOME/svc, else ~/.config/svc. */
  configDir: string;
  /** SVC_CONTEXT: the context to use when --context is not given. */
  context: string | undefined;
  /** Overrides of the selected context's values. */
  apiUrl: string | undefined;
  apiKey: string | undefined;
  gatewayUrl: string | undefined;
  dashboardUrl: string | undefined;
  ci: boolean;
  ssh: boolean;
  /** The coding agent the CLI runs under (CLAUDECODE, CURSOR_AGENT, …), if any: logins from it are labelled so. */
  agent: string | undefined;
  stdinTTY: boolean;
  stdoutTTY: boolean;
  stderrTTY: boolean;
  color: boolean;
  user: string;
  host: string;
  platform: NodeJS.Platform;
  /** BROWSER: the command that opens the login page (`none`: print the URL only). */
  browser: string | undefined;
  /** Test hooks, undocumented: device-flow poll interval and browser-login wait, in milliseconds. */
  devicePollMs: number | undefined;
  loginWaitMs: number | undefined;
}

const AGENT_MARKERS: Array<[string, string]> = [
  ['CLAUDECODE', 'claude-code'],
  ['CURSOR_AGENT', 'cursor'],
  ['CODEX_SANDBOX', 'codex'],
  ['GEMINI_CLI', 'gemini'],
  ['OPENCODE', 'opencode'],
];
const CI_MARKERS = ['CI', 'GITHUB_ACTIONS', 'GITLAB_CI', 'BUILDKITE', 'CIRCLECI', 'JENKINS_URL', 'TF_BUILD'];
const SSH_MARKERS = ['SSH_CONNECTION', 'SSH_TTY', 'SSH_CLIENT'];

const set = (v: string | undefined): v is string => v !== undefined && v !== '';
const flag = (v: string | undefined) => set(v) && v !== '0' && v.toLowerCase() !== 'false';
const positiveInt = (v: string | undefined) => (set(v) && /^\d+$/.test(v) && Number(v) > 0 ? Number(v) : undefined);

export function readClientEnv(env: Record<string, string | undefined> = process.env, streams = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }): ClientEnv {
  const configDir = set(env.SVC_CONFIG_DIR) ? env.SVC_CONFIG_DIR : set(env.XDG_CONFIG_HOME) ? join(env.XDG_CONFIG_HOME, 'svc') : join(homedir(), '.config', 'svc');
  let agent = AGENT_MARKERS.find(([name]) => flag(env[name]))?.[1];
  if (!agent && set(env.AGENT)) agent = env.AGENT.toLowerCase().replace(/[^a-z0-9-]/g, '').slice(0, 32) || undefined;
  let user = env.USER || env.USERNAME || '';
  try {
    user ||= userInfo().username;
  } catch {
    user ||= 'user';
  }
  const stderrTTY = streams.stderr.isTTY === true;
  return {
    configDir,
    context: set(env.SVC_CONTEXT) ? env.SVC_CONTEXT : undefined,
    apiUrl: set(env.SVC_API_URL) ? env.SVC_API_URL : undefined,
    apiKey: set(env.SVC_API_KEY) ? env.SVC_API_KEY : undefined,
    gatewayUrl: set(env.SVC_GATEWAY_URL) ? env.SVC_GATEWAY_URL : undefined,
    dashboardUrl: set(env.SVC_DASHBOARD_URL) ? env.SVC_DASHBOARD_URL : undefined,
    ci: CI_MARKERS.some((name) => flag(env[name])),
    ssh: SSH_MARKERS.some((name) => set(env[name])),
    agent,
    stdinTTY: streams.stdin.isTTY === true,
    stdoutTTY: streams.stdout.isTTY === true,
    stderrTTY,
    color: stderrTTY && !set(env.NO_COLOR) && env.TERM !== 'dumb',
    user,
    host: hostname(),
    platform: process.platform,
    browser: set(env.BROWSER) ? env.BROWSER : undefined,
    devicePollMs: positiveInt(env.SVC_DEVICE_POLL_MS),
    loginWaitMs: positiveInt(env.SVC_LOGIN_WAIT_MS),
  };
}
