import { defineCommand } from 'citty';
import { globalArgs } from '../args.ts';
import { loadConfigFile, saveConfigFile, type StoredContext } from '../client/config-file.ts';
import { checkUrl, resolveContext } from '../client/context.ts';
import { usageError } from '../client/exit.ts';
import { createApi } from '../client/http.ts';
import { maskKey } from '../client/mask.ts';
import { openOutput } from '../client/session.ts';
import { browserFlow } from '../client/login/browser-flow.ts';
import { deviceFlow } from '../client/login/device-flow.ts';
import { chooseFlow, defaultLabel } from '../client/login/label.ts';
import { verifyKey, type ObtainedKey } from '../client/login/obtained.ts';
import { VERSION } from '../../app/version.ts';

/**
 * `svc auth login` (also `svc login`): obtains a tenant key (--with-token, device code, or browser loopback), verifies
 * it with GET /api/profiles, saves it in the selected context (created if absent) and makes that context current.
 */
export default defineCommand({
  meta: { name: 'login', description: 'Sign in: obtain a tenant API key and save it in a context' },
  args: {
    ...globalArgs,
    'dashboard-url': { type: 'string', description: 'dashboard URL (the browser flow opens <url>/cli-auth)', valueHint: 'url' },
    'gateway-url': { type: 'string', description: 'chat gateway URL, saved for the chat command', valueHint: 'url' },
    label: { type: 'string', description: 'label of the new key (default <cli|ci|ssh|agent>-<user>@<host>)' },
    'with-token': { type: 'string', description: 'use this key as given (no browser, no device code)', valueHint: 'token' },
    headless: { type: 'boolean', description: 'use the device-code flow' },
    browserless: { type: 'boolean', description: 'use the device-code flow' },
    browser: { type: 'boolean', description: 'force the browser flow, even without a terminal', negativeDescription: 'use the device-code flow' },
  },
  async run({ args }) {
    const { env, out } = openOutput(args);
    const apiFlag = args['api-url'] !== undefined ? checkUrl('--api-url', args['api-url']) : undefined;
    const dashFlag = args['dashboard-url'] !== undefined ? checkUrl('--dashboard-url', args['dashboard-url']) : undefined;
    const gatewayFlag = args['gateway-url'] !== undefined ? checkUrl('--gateway-url', args['gateway-url']) : undefined;
    if (args['with-token'] !== undefined && !args['with-token'].trim()) throw usageError('--with-token: the token is empty');
    const label = args.label?.trim() || defaultLabel(env);

    const file = loadConfigFile(env.configDir, { warn: (m) => out.log.warn(m), platform: env.platform });
    const ctx = resolveContext(file.config, env, { context: args.context, apiUrl: apiFlag }, { allowAbsent: true });
    const dashboardUrl = dashFlag ?? ctx.dashboardUrl;
    const api = createApi(ctx.apiUrl, undefined, VERSION);

    const flow = chooseFlow({ withToken: args['with-token'], headless: args.headless, browserless: args.browserless, browser: args.browser }, env);
    let key: ObtainedKey;
    if (flow === 'token') key = { apiKey: args['with-token']!.trim(), keyId: null, role: null, org: null };
    else if (flow === 'device') key = await deviceFlow(api, out, { label, pollMs: env.devicePollMs });
    else key = await browserFlow(out, env, { dashboardUrl, label });
    await verifyKey(api, out, key);

    // Re-read: the file may have changed while we waited for the user.
    const fresh = loadConfigFile(env.configDir, { warn: () => {}, platform: env.platform }).config;
    const saved: StoredContext = { ...fresh.contexts[ctx.name] };
    if (apiFlag || env.apiUrl) saved.apiUrl = ctx.apiUrl;
    if (dashFlag) saved.dashboardUrl = dashFlag;
    if (gatewayFlag) saved.gatewayUrl = gatewayFlag;
    saved.apiKey = key.apiKey;
    if (key.keyId) saved.keyId = key.keyId;
    else delete saved.keyId;
    fresh.contexts[ctx.name] = saved;
    fresh.currentContext = ctx.name;
    const stored = saveConfigFile(env.configDir, fresh);

    const result = { context: ctx.name, apiUrl: ctx.apiUrl, apiKey: maskKey(key.apiKey), role: key.role, org: key.org, keyId: key.keyId, stored };
    if (out.json) return out.line(result);
    out.log.success(`Logged in to ${ctx.apiUrl}${key.org ? ` as ${key.role} of ${key.org}` : ''} (context ${ctx.name})`);
    out.fields(Object.entries(result));
  },
});
