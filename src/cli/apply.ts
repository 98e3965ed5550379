import { defineCommand } from 'citty';
import { globalArgs } from './args.ts';
import { usageError } from './client/exit.ts';
import { openSession } from './client/session.ts';
import { readResources } from './resources/files.ts';
import { applyStep, describeChange, planOf, type PlanStep } from './resources/plan.ts';

/**
 * `svc apply -f <file|folder> [--dry-run]`: creates what is missing and updates what differs, printing per resource
 * what changed (`profile/a created`, `pool/b updated: description: "x" → "y"`, `automation/c unchanged`). With
 * `--dry-run` it prints the plan and changes nothing. JSON: `{dryRun, resources: [{kind, name, action, changes}]}`.
 */
export const fileArg = { file: { type: 'string', alias: 'f', description: 'a YAML or JSON resource file, or a folder of them', valueHint: 'path' } } as const;

export function requireFile(file: string | undefined): string {
  if (!file) throw usageError('-f <file|folder> is required');
  return file;
}

const verb = { create: ['created', 'would be created'], update: ['updated', 'would be updated'], unchanged: ['unchanged', 'unchanged'] } as const;

export function stepLine(step: PlanStep, dryRun: boolean): string {
  const head = `${step.doc.kind.kind}/${step.doc.name} ${verb[step.action][dryRun ? 1 : 0]}`;
  const changes = Object.entries(step.changes).map(([k, c]) => describeChange(k, c));
  return changes.length ? `${head}: ${changes.join('; ')}` : head;
}

export default defineCommand({
  meta: { name: 'apply', description: 'Create or update profiles, pools, automations and workflow definitions from YAML or JSON files' },
  args: { ...globalArgs, ...fileArg, 'dry-run': { type: 'boolean', description: 'print the plan and change nothing' } },
  async run({ args }) {
    const docs = readResources(requireFile(args.file));
    const { out, api } = openSession(args, { needKey: true });
    const dryRun = args['dry-run'] === true;
    const steps = await planOf(api, docs);
    for (const step of steps) {
      if (!dryRun) await applyStep(api, step);
      if (!out.json) out.text(stepLine(step, dryRun));
    }
    if (out.json) out.data({ dryRun, resources: steps.map((s) => ({ kind: s.doc.kind.kind, name: s.doc.name, action: s.action, changes: s.changes })) });
    else if (steps.length && steps.every((s) => s.action === 'unchanged')) out.log.info('nothing to change: the server already matches the files');
  },
});
