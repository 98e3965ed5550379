import { defineCommand } from 'citty';
import { VERSION } from '../app/version.ts';

const load = <T>(p: Promise<{ default: T }>) => p.then((m) => m.default);

/**
 * The `svc` command tree: server side (serve, migrate, db) and the client (auth, context, whoami, doctor, …). Each
 * command is one file, loaded only when it runs.
 */
export const root = defineCommand({
  meta: { name: 'svc', version: VERSION, description: 'svc: self-hostable agent orchestration' },
  subCommands: {
    serve: () => load(import('./serve.ts')),
    migrate: () => load(import('./migrate.ts')),
    db: () => load(import('./db.ts')),
    auth: () => load(import('./auth/index.ts')),
    login: () => load(import('./auth/login.ts')),
    whoami: () => load(import('./whoami.ts')),
    context: () => load(import('./context/index.ts')),
    doctor: () => load(import('./doctor.ts')),
    topology: () => load(import('./topology.ts')),
    bundles: () => load(import('./bundles.ts')),
    apps: () => load(import('./apps.ts')),
    billing: () => load(import('./billing/index.ts')),
    usage: () => load(import('./usage.ts')),
    run: () => load(import('./run.ts')),
    profiles: () => load(import('./profiles.ts')),
    get: () => load(import('./get.ts')),
    create: () => load(import('./create.ts')),
    delete: () => load(import('./delete.ts')),
    apply: () => load(import('./apply.ts')),
    api: () => load(import('./api.ts')),
    sessions: () => load(import('./sessions.ts')),
    runs: () => load(import('./runs.ts')),
    approvals: () => load(import('./approvals.ts')),
    approve: () => load(import('./approve.ts')),
    automations: () => load(import('./automations.ts')),
    memory: () => load(import('./memory.ts')),
    workflows: () => load(import('./workflows.ts')),
    webhooks: () => load(import('./webhooks.ts')),
    skills: () => load(import('./skills.ts')),
    kits: () => load(import('./kits.ts')),
    publish: () => load(import('./publish.ts')),
    unpublish: () => load(import('./unpublish.ts')),
    'agent-keys': () => load(import('./agent-keys.ts')),
    chat: () => load(import('./chat.ts')),
    completion: () => load(import('./completion.ts')),
  },
});
