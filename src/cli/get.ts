import { defineCommand } from 'citty';
import { stringify } from 'yaml';
import { globalArgs } from './args.ts';
import { notFoundError } from './client/exit.ts';
import { printList } from './client/list.ts';
import { openSession } from './client/session.ts';
import { kindArg } from './delete.ts';
import { KIND_WORDS } from './resources/kinds.ts';

/**
 * `svc get <kind> [name]`: a list of rows, or one resource as a YAML file that `svc apply -f` takes back (computed
 * fields left out); with --json the server's object.
 */
export default defineCommand({
  meta: { name: 'get', description: 'List profiles, pools, automations or workflow definitions, or print one as a resource file' },
  args: {
    ...globalArgs,
    kind: { type: 'positional', description: KIND_WORDS, required: true },
    name: { type: 'positional', description: 'one resource, printed as YAML', required: false },
  },
  async run({ args }) {
    const kind = kindArg(String(args.kind));
    const { out, api } = openSession(args, { needKey: true });
    if (!args.name) return printList(out, await kind.list(api), kind.row, kind.header);
    const found = await kind.find(api, String(args.name));
    if (!found) throw notFoundError(`not found: ${kind.kind}/${args.name}`);
    if (out.json) return out.data(found);
    const doc = { kind: kind.kind, ...Object.fromEntries(Object.entries(found).filter(([k]) => !kind.computed.includes(k))) };
    out.write(stringify(doc));
  },
});
