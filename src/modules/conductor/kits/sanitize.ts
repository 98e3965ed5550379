/**
 * What a kit may carry (seed 000: "Env values, credential-shaped MCP header values and computed fields are stripped
 * at snapshot time"). Each function returns the sanitized copy and adds what it stripped to `stripped` as a dotted
 * path, so the kit can tell the person copying it which values to fill in. Keys are kept with empty values.
 */
const CREDENTIAL_NAME = /auth|token|secret|key|cookie|password|passwd|session|credential|signature/i;
const CREDENTIAL_VALUE = [/^(bearer|basic|token|digest)\s+\S/i, /^(sk|pk|ao|rk|ghp|gho|ghs|github_pat|xox[abprs]|glpat|AKIA)[-_A-Za-z0-9]{6,}/, /^[A-Za-z0-9_\-.+/=]{24,}$/];

/** A header (or query parameter) whose name or value looks like a credential. */
export function credentialShaped(name: string, value: string): boolean {
  return CREDENTIAL_NAME.test(name) || CREDENTIAL_VALUE.some((re) => re.test(value.trim()));
}

/** Profile fields computed on read or assigned by the server: never in a kit. */
const PROFILE_COMPUTED = ['id', 'workerPlacement', 'createdAt', 'updatedAt'];

function stripEnv(env: unknown, at: string, stripped: string[]): Record<string, string> | undefined {
  if (!env || typeof env !== 'object') return undefined;
  const out: Record<string, string> = {};
  for (const k of Object.keys(env as object)) {
    out[k] = '';
    stripped.push(`${at}.${k}`);
  }
  return out;
}

function sanitizeUrl(raw: string, at: string, stripped: string[]): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return raw;
  }
  if (url.username || url.password) {
    url.username = '';
    url.password = '';
    stripped.push(`${at}(userinfo)`);
  }
  for (const [k, v] of [...url.searchParams]) {
    if (credentialShaped(k, v)) {
      url.searchParams.set(k, '');
      stripped.push(`${at}?${k}`);
    }
  }
  return url.toString();
}

export function sanitizeProfile(spec: Record<string, unknown>, stripped: string[]): Record<string, unknown> {
  const name = String(spec.name);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(spec)) if (!PROFILE_COMPUTED.includes(k) && v !== undefined) out[k] = v;
  if ('env' in out) out.env = stripEnv(out.env, `profiles.${name}.env`, stripped);
  if (Array.isArray(out.mcpServers)) {
    out.mcpServers = (out.mcpServers as Array<Record<string, unknown>>).map((server) => {
      const at = `profiles.${name}.mcpServers.${String(server.name)}`;
      const s: Record<string, unknown> = { ...server };
      if (typeof s.url === 'string') s.url = sanitizeUrl(s.url, `${at}.url`, stripped);
      if (s.headers && typeof s.headers === 'object') {
        const headers: Record<string, string> = {};
        for (const [h, value] of Object.entries(s.headers as Record<string, string>)) {
          const secret = credentialShaped(h, String(value));
          headers[h] = secret ? '' : String(value);
          if (secret) stripped.push(`${at}.headers.${h}`);
        }
        s.headers = headers;
      }
      if ('env' in s) s.env = stripEnv(s.env, `${at}.env`, stripped);
      return s;
    });
  }
  return out;
}

export interface PoolSnap {
  name: string;
  description?: string;
  members: Array<{ profile: string; role: string }>;
  fs?: { read?: string[]; write?: string[] };
}

export function sanitizePool(spec: Record<string, unknown>): PoolSnap {
  const out: PoolSnap = { name: String(spec.name), members: ((spec.members ?? []) as PoolSnap['members']).map((m) => ({ profile: m.profile, role: m.role ?? 'member' })) };
  if (typeof spec.description === 'string') out.description = spec.description;
  if (spec.fs) out.fs = spec.fs as PoolSnap['fs'];
  return out;
}

export interface AutomationSnap {
  name: string;
  profile: string;
  prompt: string;
  cron: string;
  timezone: string;
  sessionMode: 'fresh' | 'persistent';
  overlap: 'skip' | 'queue';
  maxConsecutiveFailures: number;
}

/** The automation's definition only: status, schedule state, memory, session and timestamps are its tenant's. */
export function sanitizeAutomation(a: AutomationSnap): AutomationSnap {
  return { name: a.name, profile: a.profile, prompt: a.prompt, cron: a.cron, timezone: a.timezone, sessionMode: a.sessionMode, overlap: a.overlap, maxConsecutiveFailures: a.maxConsecutiveFailures };
}

/** A JSON text with sorted keys: two snapshots are equal when their canonical texts are. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v));
}
