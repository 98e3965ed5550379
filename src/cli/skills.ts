import { stat } from 'node:fs/promises';
import { defineCommand } from 'citty';
import { globalArgs, limitArg, yesArg } from './args.ts';
import { skillFolderForm } from './client/skill-folder.ts';
import { failure, usageError } from './client/exit.ts';
import { ApiError } from './client/http.ts';
import { printList, readLimit } from './client/list.ts';
import type { Output } from './client/output.ts';
import { confirm } from './client/prompt.ts';
import { openSession } from './client/session.ts';

/** `svc skills list|import`: the skill catalog; `import` shows the staged dry run of a folder, then commits it. */
interface Resource {
  path: string;
  contentType: string;
  sha256: string;
  executable: boolean;
  bytes: number;
}
interface Issue {
  code: string;
  message: string;
}
interface DryRun {
  stagingId: string | null;
  expiresAt: string | null;
  skill: { name: string; description: string; license: string | null; compatibility: string | null; allowedTools: string[] };
  resources: Resource[];
  requiresSandbox: boolean;
  totalBytes: number;
  validation: { ok: boolean; errors: Issue[]; warnings: Issue[] };
}

function printDryRun(out: Output, d: DryRun): void {
  out.fields([
    ['name', d.skill.name || null],
    ['description', d.skill.description || null],
    ['license', d.skill.license],
    ['allowedTools', d.skill.allowedTools.join(' ') || null],
    ['requiresSandbox', d.requiresSandbox],
    ['totalBytes', d.totalBytes],
  ]);
  out.rows(d.resources.map((r) => [r.path, r.bytes, r.executable ? 'executable' : '-', r.contentType, r.sha256]), ['path', 'bytes', 'mode', 'type', 'sha256']);
  for (const w of d.validation.warnings) out.log.warn(w.message);
  for (const e of d.validation.errors) out.log.error(e.message);
}

const importCommand = defineCommand({
  meta: { name: 'import', description: 'Import a skill folder (SKILL.md at its root): show the dry run, then commit it' },
  args: { ...globalArgs, ...yesArg, folder: { type: 'positional', description: 'the skill folder', required: true } },
  async run({ args }) {
    const { env, out, api } = openSession(args, { needKey: true });
    if (!(await stat(args.folder).catch(() => undefined))?.isDirectory()) throw usageError(`skills import: ${args.folder} is not a folder`);
    let dry: DryRun;
    try {
      dry = (await api.request<DryRun>('POST', '/api/skills/import', { form: await skillFolderForm(args.folder), timeoutMs: 120_000 })).data;
    } catch (err) {
      const body = err instanceof ApiError ? (err.body as DryRun | undefined) : undefined;
      if (!body?.validation) throw err;
      if (out.json) out.data({ dryRun: body, imported: null });
      else printDryRun(out, body);
      throw failure(`skill package refused: ${body.validation.errors.length} problem(s); nothing was imported`);
    }
    if (!out.json) printDryRun(out, dry);
    const interactive = env.stdinTTY && env.stdoutTTY;
    if (!args.yes && !interactive) {
      if (out.json) out.data({ dryRun: dry, imported: null });
      throw usageError('skills import: nothing imported; pass --yes to commit when not in a terminal');
    }
    if (!args.yes && !(await confirm(`Import skill ${dry.skill.name} (${dry.resources.length} files, ${dry.totalBytes} bytes)?`, true))) {
      out.log.info('cancelled: nothing imported');
      return;
    }
    const { data } = await api.request<{ name: string; source: string }>('POST', `/api/skills/import/${encodeURIComponent(dry.stagingId!)}`);
    if (out.json) return out.data({ dryRun: dry, imported: data });
    out.log.success(`skill ${data.name} imported`);
  },
});

export default defineCommand({
  meta: { name: 'skills', description: 'The skill catalog' },
  subCommands: {
    list: defineCommand({
      meta: { name: 'list', description: 'List skills' },
      args: { ...globalArgs, ...limitArg },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        const items = await api.get<Array<{ name: string; source: string; description: string }>>(`/api/skills?limit=${readLimit(args.limit)}`);
        printList(out, items, (s) => [s.name, s.source, s.description], ['name', 'source', 'description']);
      },
    }),
    import: importCommand,
  },
});
