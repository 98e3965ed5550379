import { defineCommand } from 'citty';
import { globalArgs } from '../args.ts';
import { loadConfigFile } from '../client/config-file.ts';
import { selectName } from '../client/context.ts';
import { maskKey } from '../client/mask.ts';
import { openOutput } from '../client/session.ts';

/** `svc context list`: the contexts of the config file (no request, no environment overrides), current marked. */
export default defineCommand({
  meta: { name: 'list', description: 'List the contexts of the config file' },
  args: { ...globalArgs },
  async run({ args }) {
    const { env, out } = openOutput(args);
    const { config } = loadConfigFile(env.configDir, { warn: (m) => out.log.warn(m), platform: env.platform });
    const current = selectName(config, env, { context: args.context }).name;
    const rows = Object.keys(config.contexts)
      .sort()
      .map((name) => ({ name, current: name === current, apiUrl: config.contexts[name].apiUrl ?? null, gatewayUrl: config.contexts[name].gatewayUrl ?? null, hasKey: !!config.contexts[name].apiKey, key: config.contexts[name].apiKey }));
    if (out.json) return out.data(rows.map(({ key: _key, ...r }) => r));
    out.rows(rows.map((r) => [r.current ? '*' : '', r.name, r.apiUrl ?? '-', maskKey(r.key) ?? '-']), ['', 'context', 'api url', 'key']);
  },
});
