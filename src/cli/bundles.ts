import { defineCommand } from 'citty';
import { globalArgs } from './args.ts';
import { openSession } from './client/session.ts';

/** `svc bundles`: the capability bundles a profile's `tools` may name (`@default`, `@files`, …). */
export default defineCommand({
  meta: { name: 'bundles', description: 'List the capability bundles profiles can use' },
  args: { ...globalArgs },
  async run({ args }) {
    const { out, api } = openSession(args, { needKey: true });
    const { bundles } = await api.get<{ bundles: Array<{ value: string; label: string; description: string }> }>('/api/capability-bundles');
    const shown = bundles.map((b) => ({ value: b.value, label: b.label, description: b.description }));
    if (out.json) return out.data(shown);
    out.rows(shown.map((b) => [b.value, b.label, b.description]), ['bundle', 'label', 'description']);
  },
});
