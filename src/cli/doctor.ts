import { defineCommand } from 'citty';
import { VERSION } from '../app/version.ts';
import { globalArgs } from './args.ts';
import { loadConfigFile, configPath, type LoadedConfig } from './client/config-file.ts';
import { resolveContext, selectName, type EffectiveContext } from './client/context.ts';
import { runChecks } from './client/doctor/checks.ts';
import { probe } from './client/doctor/probes.ts';
import { failure } from './client/exit.ts';
import { USER_AGENT } from './client/http.ts';
import { openOutput } from './client/session.ts';

/**
 * `svc doctor`: eleven preflight checks (config file, its mode, context, API URL, TLS, key shape, reachability and
 * readiness (`/readyz`, with the server's container engine when it has one), key
 * validity, clock skew, server version, dashboard). The four network probes run at once, 3000 ms each. Exit 1 when a
 * check fails; warnings alone do not.
 */
export default defineCommand({
  meta: { name: 'doctor', description: 'Check the configuration, the connection and the key' },
  args: { ...globalArgs },
  async run({ args }) {
    const { env, out } = openOutput(args);
    let file: LoadedConfig | { path: string; error: string };
    try {
      file = loadConfigFile(env.configDir, { warn: () => {}, platform: env.platform });
    } catch (err) {
      file = { path: configPath(env.configDir), error: err instanceof Error ? err.message : String(err) };
    }
    const config = 'error' in file ? { contexts: {} } : file.config;
    const selected = selectName(config, env, { context: args.context });
    const stored = Object.hasOwn(config.contexts, selected.name) ? config.contexts[selected.name] : undefined;
    let ctx: EffectiveContext | { error: string };
    try {
      ctx = resolveContext(config, env, { context: args.context, apiUrl: args['api-url'] }, { allowAbsent: true });
    } catch (err) {
      ctx = { error: err instanceof Error ? err.message : String(err) };
    }
    const apiKey = env.apiKey ?? stored?.apiKey;
    const userAgent = `${USER_AGENT}/${VERSION}`;
    const usable = 'error' in ctx ? undefined : ctx;
    const [health, whoami, profiles, dashboard] = await Promise.all([
      usable ? probe(`${usable.apiUrl}/readyz`, { userAgent }) : undefined,
      usable && apiKey ? probe(`${usable.apiUrl}/api/whoami`, { userAgent, key: apiKey }) : undefined,
      usable && apiKey ? probe(`${usable.apiUrl}/api/profiles?limit=1`, { userAgent, key: apiKey }) : undefined,
      usable ? probe(usable.dashboardUrl, { userAgent }) : undefined,
    ]);
    const checks = runChecks({
      file,
      platform: env.platform,
      contextName: selected.name,
      contextStored: stored !== undefined,
      contextSource: selected.source,
      envOnly: !!(env.apiUrl && env.apiKey),
      ctx,
      apiKey,
      cliVersion: VERSION,
      probes: { health, whoami, profiles, dashboard },
    });
    if (out.json) out.data(checks);
    else {
      out.rows(checks.map((c) => [c.name, c.status, c.message]), ['check', 'status', 'detail']);
      for (const c of checks) if (c.fix && c.status !== 'pass') out.log.info(`${c.name}: ${c.fix}`);
    }
    const failed = checks.filter((c) => c.status === 'fail');
    if (failed.length) throw failure(`${failed.length} check${failed.length > 1 ? 's' : ''} failed: ${failed.map((c) => c.name).join(', ')}`);
  },
});
