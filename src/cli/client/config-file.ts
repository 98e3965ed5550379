import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { failure } from './exit.ts';

/**
 * config.json of the client: `{currentContext, contexts: {name: {apiUrl, dashboardUrl, gatewayUrl, apiKey, keyId}}}`.
 * Saved with the directory at 0700 and the file at 0600 (written to a temporary file and renamed, so a crash never
 * leaves half a file). A file readable by group or other draws a `chmod 600` warning on every load.
 */
export interface StoredContext {
  apiUrl?: string;
  dashboardUrl?: string;
  gatewayUrl?: string;
  apiKey?: string;
  keyId?: string;
}

export interface ConfigFile {
  currentContext?: string;
  contexts: Record<string, StoredContext>;
}

export interface LoadedConfig {
  path: string;
  exists: boolean;
  /** Permission bits of the file (undefined when absent). */
  mode: number | undefined;
  config: ConfigFile;
}

export const configPath = (dir: string) => join(dir, 'config.json');

const FIELDS = ['apiUrl', 'dashboardUrl', 'gatewayUrl', 'apiKey', 'keyId'] as const;

export function loadConfigFile(dir: string, opts: { warn(message: string): void; platform: NodeJS.Platform }): LoadedConfig {
  const path = configPath(dir);
  if (!existsSync(path)) return { path, exists: false, mode: undefined, config: { contexts: {} } };
  const mode = statSync(path).mode & 0o777;
  if (opts.platform !== 'win32' && (mode & 0o077) !== 0) {
    opts.warn(`config file ${path} is readable by group or others (mode ${mode.toString(8).padStart(4, '0')}); run: chmod 600 ${path}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw failure(`cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`, 'fix or remove the file, then run `svc auth login`');
  }
  return { path, exists: true, mode, config: normalize(raw, path) };
}

function normalize(raw: unknown, path: string): ConfigFile {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw failure(`cannot read ${path}: expected a JSON object`);
  const obj = raw as Record<string, unknown>;
  const contexts: Record<string, StoredContext> = {};
  const rawContexts = obj.contexts && typeof obj.contexts === 'object' && !Array.isArray(obj.contexts) ? (obj.contexts as Record<string, unknown>) : {};
  for (const [name, value] of Object.entries(rawContexts)) {
    if (!value || typeof value !== 'object') continue;
    const ctx: StoredContext = {};
    for (const f of FIELDS) {
      const v = (value as Record<string, unknown>)[f];
      if (typeof v === 'string' && v !== '') ctx[f] = v;
    }
    contexts[name] = ctx;
  }
  return { ...(typeof obj.currentContext === 'string' && obj.currentContext ? { currentContext: obj.currentContext } : {}), contexts };
}

export function saveConfigFile(dir: string, config: ConfigFile): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = configPath(dir);
  const tmp = `${path}.${process.pid}.tmp`;
  const sorted: ConfigFile = { ...(config.currentContext ? { currentContext: config.currentContext } : {}), contexts: {} };
  for (const name of Object.keys(config.contexts).sort()) sorted.contexts[name] = config.contexts[name];
  writeFileSync(tmp, JSON.stringify(sorted, null, 2) + '\n', { mode: 0o600 });
  chmodSync(tmp, 0o600); // the umask may have narrowed it; never widen beyond 0600
  renameSync(tmp, path);
  return path;
}
