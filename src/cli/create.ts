import { defineCommand } from 'citty';
import { globalArgs } from './args.ts';
import { openSession } from './client/session.ts';
import { fileArg, requireFile } from './apply.ts';
import { readResources } from './resources/files.ts';

/** `svc create -f <file|folder>`: creates every resource of the files; one that exists already fails (409). */
export default defineCommand({
  meta: { name: 'create', description: 'Create profiles, pools, automations and workflow definitions from YAML or JSON files' },
  args: { ...globalArgs, ...fileArg },
  async run({ args }) {
    const docs = readResources(requireFile(args.file));
    const { out, api } = openSession(args, { needKey: true });
    const created = [];
    for (const d of docs) {
      created.push({ kind: d.kind.kind, name: d.name, object: await d.kind.create(api, d.body) });
      if (!out.json) out.text(`${d.kind.kind}/${d.name} created`);
    }
    if (out.json) out.data(created);
  },
});
