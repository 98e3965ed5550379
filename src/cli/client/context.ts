import type { ClientEnv } from './env.ts';
import type { ConfigFile, StoredContext } from './config-file.ts';
import { usageError } from './exit.ts';

/**
 * The effective context: which context is selected and what its values are after environment overrides.
 *
 * Selection: --context, then SVC_CONTEXT, then the file's currentContext, then `default`. Values: a flag (only
 * --api-url), then SVC_API_URL / SVC_API_KEY / SVC_GATEWAY_URL / SVC_DASHBOARD_URL, then the context in the file,
 * then the baked-in defaults (API and dashboard URLs only: the server `svc serve` starts on this machine), which are
 * listed in `defaults`. An API URL without a dashboard URL uses the API's own origin as the dashboard: svc's conductor
 * serves those pages.
 */
export const DEFAULT_API_URL = 'http://127.0.0.1:8080';
export const DEFAULT_DASHBOARD_URL = DEFAULT_API_URL;

export type Source = 'flag' | 'env' | 'context' | 'default' | 'derived';

export interface EffectiveContext {
  name: string;
  nameSource: 'flag' | 'env' | 'file' | 'default';
  /** The context exists in the config file. */
  stored: boolean;
  apiUrl: string;
  apiKey: string | undefined;
  keyId: string | undefined;
  gatewayUrl: string | undefined;
  dashboardUrl: string;
  sources: { apiUrl: Source; apiKey?: Source; gatewayUrl?: Source; dashboardUrl: Source };
  /** Fields whose value fell through to a baked-in default. */
  defaults: Array<'apiUrl' | 'dashboardUrl'>;
  /** Something explicit is set: a stored context, an environment override or a flag. */
  configured: boolean;
}

export interface Selection {
  context?: string;
  apiUrl?: string;
}

export function selectName(file: ConfigFile, env: ClientEnv, flags: Selection): { name: string; source: EffectiveContext['nameSource'] } {
  if (flags.context) return { name: flags.context, source: 'flag' };
  if (env.context) return { name: env.context, source: 'env' };
  if (file.currentContext) return { name: file.currentContext, source: 'file' };
  return { name: 'default', source: 'default' };
}

/** http:// or https:// and parseable; trailing slashes dropped. */
export function checkUrl(what: string, value: string): string {
  let ok = /^https?:\/\//i.test(value);
  if (ok) {
    try {
      new URL(value);
    } catch {
      ok = false;
    }
  }
  if (!ok) throw usageError(`${what}: expected a URL starting with http:// or https://, got "${value}"`);
  return value.replace(/\/+$/, '');
}

/**
 * Resolves the effective context. Naming a context that is not in the file is a usage error, except for login (which
 * creates it) and when SVC_API_URL and SVC_API_KEY are both set (the environment alone is enough).
 */
export function resolveContext(file: ConfigFile, env: ClientEnv, flags: Selection, opts: { allowAbsent?: boolean } = {}): EffectiveContext {
  const { name, source } = selectName(file, env, flags);
  const stored: StoredContext | undefined = Object.hasOwn(file.contexts, name) ? file.contexts[name] : undefined;
  if (!stored && source !== 'default' && !opts.allowAbsent && !(env.apiUrl && env.apiKey)) {
    const known = Object.keys(file.contexts).sort();
    throw usageError(`context "${name}" does not exist${known.length ? ` (contexts: ${known.join(', ')})` : ' (the config file has no contexts)'}`, 'run `svc context list`, or `svc auth login --context ' + name + '` to create it');
  }
  const ctx = stored ?? {};
  const pick = (flag: string | undefined, fromEnv: string | undefined, fromFile: string | undefined): [string | undefined, Source | undefined] =>
    flag ? [flag, 'flag'] : fromEnv ? [fromEnv, 'env'] : fromFile ? [fromFile, 'context'] : [undefined, undefined];

  const [apiUrlRaw, apiUrlSource] = pick(flags.apiUrl, env.apiUrl, ctx.apiUrl);
  const apiUrl = apiUrlRaw ? checkUrl(apiUrlSource === 'flag' ? '--api-url' : apiUrlSource === 'env' ? 'SVC_API_URL' : `context ${name}: apiUrl`, apiUrlRaw) : DEFAULT_API_URL;
  const [apiKey, apiKeySource] = pick(undefined, env.apiKey, ctx.apiKey);
  const [gatewayUrl, gatewaySource] = pick(undefined, env.gatewayUrl, ctx.gatewayUrl);
  const [dashRaw, dashSource] = pick(undefined, env.dashboardUrl, ctx.dashboardUrl);
  const defaults: EffectiveContext['defaults'] = [];
  if (!apiUrlRaw) defaults.push('apiUrl');
  let dashboardUrl: string;
  let dashboardSource: Source;
  if (dashRaw) [dashboardUrl, dashboardSource] = [checkUrl('dashboardUrl', dashRaw), dashSource!];
  else if (apiUrlRaw) [dashboardUrl, dashboardSource] = [apiUrl, 'derived'];
  else {
    [dashboardUrl, dashboardSource] = [DEFAULT_DASHBOARD_URL, 'default'];
    defaults.push('dashboardUrl');
  }
  return {
    name,
    nameSource: source,
    stored: stored !== undefined,
    apiUrl,
    apiKey,
    keyId: apiKeySource === 'context' ? ctx.keyId : undefined,
    gatewayUrl: gatewayUrl ? checkUrl('gatewayUrl', gatewayUrl) : undefined,
    dashboardUrl,
    sources: { apiUrl: apiUrlSource ?? 'default', apiKey: apiKeySource, gatewayUrl: gatewaySource, dashboardUrl: dashboardSource },
    defaults,
    configured: stored !== undefined || !!(flags.apiUrl || env.apiUrl || env.apiKey || env.gatewayUrl || env.dashboardUrl),
  };
}

/** `http://127.0.0.1:8080 (default)` for plain output. */
export function marked(ctx: EffectiveContext, field: 'apiUrl' | 'dashboardUrl'): string {
  return ctx.defaults.includes(field) ? `${ctx[field]} (default)` : ctx[field];
}
