#!/usr/bin/env node
// Tiny shim into the CLI. svc runs on Node >= 22.12 (it ships Node 24 as a devDependency); when started by an older
// node, re-run under the project's own.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  const local = fileURLToPath(new URL('../node_modules/.bin/node', import.meta.url));
  if (!existsSync(local)) {
    process.stderr.write(`svc needs Node.js >= 22.12 (found ${process.version}); run \`npm install\` to get the bundled Node 24\n`);
    process.exit(2);
  }
  const r = spawnSync(local, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? (r.signal === 'SIGINT' ? 130 : 1));
}
// Node keeps the compiled (and type-stripped) modules in a cache in the temporary folder: every later start of svc
// skips most of that work, which is most of its boot.
(await import('node:module')).enableCompileCache?.();
await import('../src/cli/main.ts');
