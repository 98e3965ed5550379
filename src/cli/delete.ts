import { defineCommand } from 'citty';
import { globalArgs } from './args.ts';
import { notFoundError, usageError } from './client/exit.ts';
import { openSession } from './client/session.ts';
import { fileArg } from './apply.ts';
import { readResources } from './resources/files.ts';
import { kindOf, KIND_WORDS, type Kind } from './resources/kinds.ts';

/** Resolves a kind word of the command line (exit 2 when unknown or not managed yet). */
export function kindArg(word: string): Kind {
  const kind = kindOf(word);
  if (!kind) throw usageError(`unknown kind "${word}"; expected one of ${KIND_WORDS}`);
  return kind;
}

/** `svc delete <kind> <name>` or `svc delete -f <file|folder>` (automations first, profiles last). */
export default defineCommand({
  meta: { name: 'delete', description: 'Delete a profile, pool, automation or workflow definition (or every resource of files)' },
  args: {
    ...globalArgs,
    ...fileArg,
    kind: { type: 'positional', description: `${KIND_WORDS}`, required: false },
    name: { type: 'positional', description: 'its name', required: false },
  },
  async run({ args }) {
    const targets = args.file
      ? readResources(args.file).reverse().map((d) => ({ kind: d.kind, name: d.name }))
      : args.kind && args.name
        ? [{ kind: kindArg(String(args.kind)), name: String(args.name) }]
        : (() => {
            throw usageError('expected <kind> <name>, or -f <file|folder>');
          })();
    const { out, api } = openSession(args, { needKey: true });
    const deleted = [];
    for (const t of targets) {
      const current = await t.kind.find(api, t.name);
      if (!current) throw notFoundError(`not found: ${t.kind.kind}/${t.name}`);
      await t.kind.remove(api, current);
      deleted.push({ kind: t.kind.kind, name: t.name });
      if (!out.json) out.text(`${t.kind.kind}/${t.name} deleted`);
    }
    if (out.json) out.data(deleted);
  },
});
