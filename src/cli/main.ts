import { defineCommand, runMain } from 'citty';
import { VERSION } from '../app/version.ts';

/** The `svc` command: server side (serve, migrate, db) and client side (added per command file), loaded lazily. */
const main = defineCommand({
  meta: { name: 'svc', version: VERSION, description: 'svc: self-hostable agent orchestration' },
  subCommands: {
    serve: () => import('./serve.ts').then((m) => m.default),
    migrate: () => import('./migrate.ts').then((m) => m.default),
    db: () => import('./db.ts').then((m) => m.default),
  },
});

await runMain(main);
