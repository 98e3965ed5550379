import { VERSION } from '../../app/version.ts';
import type { GlobalFlags } from '../args.ts';
import { loadConfigFile, type LoadedConfig } from './config-file.ts';
import { resolveContext, type EffectiveContext } from './context.ts';
import { readClientEnv, type ClientEnv } from './env.ts';
import { authError } from './exit.ts';
import { createApi, type Api } from './http.ts';
import { createOutput, type Output } from './output.ts';

/**
 * What a client command starts from: its environment, output, the config file, the effective context and an API
 * client. `needKey` makes a missing URL or key an authentication failure (exit 3) before any request.
 */
export interface Session {
  env: ClientEnv;
  out: Output;
  file: LoadedConfig;
  ctx: EffectiveContext;
  api: Api;
  version: string;
}

export function openOutput(flags: GlobalFlags, env = readClientEnv()): { env: ClientEnv; out: Output } {
  return { env, out: createOutput(env, flags.json === true) };
}

export function openSession(flags: GlobalFlags, opts: { needKey?: boolean; allowAbsent?: boolean } = {}): Session {
  const { env, out } = openOutput(flags);
  const file = loadConfigFile(env.configDir, { warn: (m) => out.log.warn(m), platform: env.platform });
  const ctx = resolveContext(file.config, env, { context: flags.context, apiUrl: flags['api-url'] }, { allowAbsent: opts.allowAbsent });
  if (opts.needKey && !ctx.apiKey) {
    throw authError(`no API key for context "${ctx.name}"`, 'run `svc auth login`, or set SVC_API_KEY');
  }
  return { env, out, file, ctx, api: createApi(ctx.apiUrl, ctx.apiKey, VERSION), version: VERSION };
}
