import type { LoadedConfig } from '../config-file.ts';
import type { EffectiveContext } from '../context.ts';
import { maskKey, isTenantKey } from '../mask.ts';
import type { Probe } from './probes.ts';

/**
 * The eleven preflight checks of `svc doctor`, as pure functions of what was read and probed. Each answers pass,
 * warn, fail or skip, and names a fix only when there is a remedy.
 */
export type Status = 'pass' | 'warn' | 'fail' | 'skip';
export interface Check {
  name: string;
  status: Status;
  message: string;
  fix?: string;
}

export interface DoctorInput {
  file: LoadedConfig | { path: string; error: string };
  platform: NodeJS.Platform;
  /** The context name, whether the file has it, and how it was chosen. */
  contextName: string;
  contextStored: boolean;
  contextSource: EffectiveContext['nameSource'];
  envOnly: boolean;
  ctx: EffectiveContext | { error: string };
  apiKey: string | undefined;
  cliVersion: string;
  probes: { health?: Probe; whoami?: Probe; profiles?: Probe; dashboard?: Probe };
}

const isLoopback = (host: string) => host === 'localhost' || host === '[::1]' || host === '::1' || /^127\./.test(host);
const check = (name: string, status: Status, message: string, fix?: string): Check => (fix ? { name, status, message, fix } : { name, status, message });
const LOGIN = 'svc auth login';

export function runChecks(i: DoctorInput): Check[] {
  const out: Check[] = [];
  const loaded = 'error' in i.file ? undefined : i.file;
  // 1. config file
  if ('error' in i.file) out.push(check('config-file', 'fail', i.file.error, `fix or remove ${i.file.path}, then run \`${LOGIN}\``));
  else if (!i.file.exists) out.push(check('config-file', i.envOnly ? 'pass' : 'warn', i.envOnly ? `no config file at ${i.file.path}; using the environment` : `no config file at ${i.file.path}`, i.envOnly ? undefined : LOGIN));
  else out.push(check('config-file', 'pass', i.file.path));
  // 2. config file mode
  if (!loaded?.exists || loaded.mode === undefined) out.push(check('config-permissions', 'skip', 'no config file'));
  else if (i.platform === 'win32') out.push(check('config-permissions', 'skip', 'not checked on Windows'));
  else if ((loaded.mode & 0o077) !== 0) {
    const keys = Object.values(loaded.config.contexts).some((c) => c.apiKey);
    out.push(check('config-permissions', keys ? 'fail' : 'warn', `mode ${loaded.mode.toString(8).padStart(4, '0')}: readable by group or others${keys ? ' and it holds API keys' : ''}`, `chmod 600 ${loaded.path}`));
  } else out.push(check('config-permissions', 'pass', `mode ${loaded.mode.toString(8).padStart(4, '0')}`));
  // 3. context
  const how = { flag: '--context', env: 'SVC_CONTEXT', file: 'currentContext', default: 'the default name' }[i.contextSource];
  if (i.contextStored) out.push(check('context', 'pass', `${i.contextName} (from ${how})`));
  else if (i.envOnly) out.push(check('context', 'pass', `${i.contextName}: not in the config file; SVC_API_URL and SVC_API_KEY are used`));
  else if (i.contextSource === 'default') out.push(check('context', 'warn', `no context selected and no "${i.contextName}" context in the config file`, LOGIN));
  else out.push(check('context', 'fail', `context "${i.contextName}" (from ${how}) does not exist`, `svc context list, or ${LOGIN} --context ${i.contextName}`));
  // 4. API URL, 5. TLS
  const ctx = 'error' in i.ctx ? undefined : i.ctx;
  if (!ctx) {
    out.push(check('api-url', 'fail', (i.ctx as { error: string }).error, 'set an http:// or https:// URL with --api-url, SVC_API_URL or `svc auth login --api-url`'));
    out.push(check('tls', 'skip', 'no usable API URL'));
  } else {
    out.push(check('api-url', 'pass', `${ctx.apiUrl}${ctx.defaults.includes('apiUrl') ? ' (default)' : ''}`));
    const u = new URL(ctx.apiUrl);
    if (u.protocol === 'https:') out.push(check('tls', 'pass', 'https'));
    else if (isLoopback(u.hostname)) out.push(check('tls', 'pass', 'http on a loopback address'));
    else out.push(check('tls', 'warn', `plain http to ${u.hostname}: the key travels unencrypted`, 'use an https:// API URL'));
  }
  // 6. key present and shaped
  if (!i.apiKey) out.push(check('api-key', 'fail', 'no API key', `${LOGIN}, or set SVC_API_KEY`));
  else if (isTenantKey(i.apiKey)) out.push(check('api-key', 'pass', maskKey(i.apiKey)!));
  else out.push(check('api-key', 'warn', `${maskKey(i.apiKey)} does not look like an svc tenant key (ao_<env>_<random>)`, LOGIN));
  // 7. reachable, and ready: /readyz names what the server's dependencies answer (its container engine among them)
  const h = i.probes.health;
  out.push(reachability(h));
  const reachable = !!h?.ok;
  // 8. key valid
  out.push(keyValid(i, reachable));
  // 9. clock skew, 10. server version: from the /readyz response
  out.push(clockSkew(h));
  out.push(serverVersion(h, i.cliVersion));
  // 11. dashboard
  const d = i.probes.dashboard;
  if (!d || !ctx) out.push(check('dashboard-reachable', 'skip', 'no usable dashboard URL'));
  else if (!d.ok) out.push(check('dashboard-reachable', 'warn', `${ctx.dashboardUrl}: ${d.error} (only the browser login needs it)`, 'set --dashboard-url on login, or SVC_DASHBOARD_URL'));
  else if (d.status >= 500) out.push(check('dashboard-reachable', 'warn', `${ctx.dashboardUrl} answered ${d.status}`));
  else out.push(check('dashboard-reachable', 'pass', `${ctx.dashboardUrl}${ctx.defaults.includes('dashboardUrl') ? ' (default)' : ''} answered in ${d.ms} ms`));
  return out;
}

interface Readyz {
  status?: string;
  error?: string;
  checks?: Array<{ name: string; ok: boolean; detail?: string; error?: string }>;
  warnings?: string[];
}

/**
 * The sandbox limits the server's runners report (each runner's check, `sandbox limits <mode>: <mechanism> (<limits>)`,
 * the same line once however many runners say it) and its readiness warnings (limits off or only partly enforced).
 * Shown, not judged: a laptop without cgroups is a fine place to try svc, so this never turns the check into a warning.
 */
function limitsText(body: Readyz): string {
  const lines = new Set((body.checks ?? []).flatMap((c) => (c.ok && c.name.startsWith('runner ') && c.detail?.startsWith('sandbox limits') ? [c.detail] : [])));
  const warnings = (body.warnings ?? []).filter((w) => typeof w === 'string');
  return [...lines].map((l) => `; ${l}`).join('') + warnings.map((w) => `; warning: ${w}`).join('');
}

/**
 * `GET /readyz`: 200 is reachable and ready; 503 with svc's readiness body is reachable but not ready (a warning naming
 * why); anything else is not an svc server. A container engine and the sandbox limits the server reports are named
 * either way.
 */
function reachability(h: Probe | undefined): Check {
  const name = 'api-reachable';
  if (!h) return check(name, 'skip', 'no usable API URL');
  if (!h.ok) return check(name, 'fail', `GET /readyz: ${h.error}`, 'check the API URL and that the server is running');
  const body = (typeof h.body === 'object' && h.body !== null ? h.body : {}) as Readyz;
  const engine = body.checks?.find((c) => c.name === 'container engine');
  const engineText = (engine?.ok && engine.detail ? `; container engine: ${engine.detail}` : '') + limitsText(body);
  if (h.status === 200) return check(name, 'pass', `GET /readyz 200 in ${h.ms} ms${engineText}`);
  if (h.status === 503 && body.status === 'not ready') return check(name, 'warn', `reachable, not ready: ${body.error ?? 'no reason given'}${engineText}`, 'see the server log and its GET /readyz');
  return check(name, 'fail', `GET /readyz answered ${h.status}`, 'check the API URL: it should point at an svc conductor');
}

function keyValid(i: DoctorInput, reachable: boolean): Check {
  const name = 'key-valid';
  if (!i.apiKey) return check(name, 'skip', 'no API key');
  if (!reachable) return check(name, 'skip', 'the API is not reachable');
  const w = i.probes.whoami;
  if (!w || !w.ok) return check(name, 'fail', `GET /api/whoami: ${w && !w.ok ? w.error : 'not run'}`);
  if (w.status === 200) {
    const b = w.body as { tenantId?: string; role?: string };
    return check(name, 'pass', `organization ${b.tenantId ?? '?'}, role ${b.role ?? '?'}`);
  }
  if (w.status === 401 || w.status === 403) return check(name, 'fail', `the key was rejected (${w.status}: ${(w.body as { error?: string })?.error ?? ''})`, LOGIN);
  const p = i.probes.profiles;
  if (w.status === 404 && p?.ok && p.status === 200) return check(name, 'pass', 'accepted (GET /api/profiles; the server has no /api/whoami)');
  if (w.status === 404 && p?.ok && (p.status === 401 || p.status === 403)) return check(name, 'fail', `the key was rejected (${p.status})`, LOGIN);
  return check(name, 'fail', `GET /api/whoami answered ${w.status}`);
}

function clockSkew(h: Probe | undefined): Check {
  const name = 'clock-skew';
  if (!h?.ok) return check(name, 'skip', 'the API is not reachable');
  const date = h.headers.get('date');
  const server = date ? Date.parse(date) : NaN;
  if (Number.isNaN(server)) return check(name, 'skip', 'the server sent no Date header');
  // The Date header has one-second resolution and was stamped somewhere within the round trip.
  const skew = Math.round((h.startedAt + h.ms / 2 - server) / 1000);
  const text = `${Math.abs(skew)} s ${skew >= 0 ? 'ahead of' : 'behind'} the server`;
  if (Math.abs(skew) <= 60) return check(name, 'pass', `clock ${Math.abs(skew) <= 1 ? 'in sync with the server' : text}`);
  return check(name, Math.abs(skew) <= 300 ? 'warn' : 'fail', `clock ${text}: expiries and signatures may misbehave`, 'synchronise the system clock (NTP)');
}

function serverVersion(h: Probe | undefined, cli: string): Check {
  const name = 'server-version';
  if (!h?.ok) return check(name, 'skip', 'the API is not reachable');
  const server = h.headers.get('x-svc-version');
  if (!server) return check(name, 'skip', 'the server does not report its version');
  const [sMajor, sMinor] = server.split('.').map(Number);
  const [cMajor, cMinor] = cli.split('.').map(Number);
  const compatible = sMajor === cMajor && (sMajor !== 0 || sMinor === cMinor);
  if (compatible) return check(name, 'pass', `server ${server}, CLI ${cli}`);
  return check(name, 'warn', `server ${server}, CLI ${cli}: versions differ in a breaking position`, `install the svc CLI ${sMajor}.${sMajor === 0 ? sMinor : 'x'}`);
}
