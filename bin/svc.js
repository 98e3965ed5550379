#!/usr/bin/env node
// Tiny shim into the CLI. svc runs on Node >= 22.12 (it ships Node 24 as a devDependency); when started by an older
// node, re-run under the project's own.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  const local = fileURLToPath(new URL('../node_modules/.bin/node', import.meta.url));
  if (!existsSync(local)) {
    process.stderr.write(`svc needs Node.js >= 22.12 (found ${process.version}); run \`npm install\` to get the bundled Node 24\n`);
    process.exit(2);
  }
  const child = spawn(local, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  // Whoever stops this pid (a service manager, `kill`, a closed terminal) means the server in the child: pass the
  // signal on, or the child keeps its port after we are gone. A Ctrl-C in a terminal reaches the whole foreground
  // process group, the child included, so SIGINT is not passed on there: a second one would read as "force quit".
  const forward = (signal) => {
    if (signal === 'SIGINT' && process.stdin.isTTY) return;
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  const signals = ['SIGTERM', 'SIGINT', 'SIGHUP'];
  for (const s of signals) process.on(s, forward);
  child.on('error', (err) => {
    process.stderr.write(`svc: could not start ${local}: ${err.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (code !== null) process.exit(code);
    // End the way the child ended, so our parent (a shell, npm, a service manager) sees the same signal.
    for (const s of signals) process.off(s, forward);
    process.kill(process.pid, signal ?? 'SIGTERM');
  });
} else {
  // Node keeps the compiled (and type-stripped) modules in a cache in the temporary folder: every later start of svc
  // skips most of that work, which is most of its boot.
  (await import('node:module')).enableCompileCache?.();
  // A clone runs its boot bundle (bin/bundle.js: the sources and dependencies in a few dozen files instead of about a
  // thousand modules) when it was built from the sources as they are now, else the TypeScript sources as they are;
  // SVC_NO_BUNDLE=1 runs the sources. The npm package ships them compiled (Node does not strip types inside
  // node_modules), in dist/.
  const sources = new URL('../src/cli/main.ts', import.meta.url);
  if (existsSync(sources)) {
    const bundle = process.env.SVC_NO_BUNDLE === '1' ? undefined : (await import('./bundle.js')).freshBundle();
    await import(bundle ? pathToFileURL(bundle).href : sources.href);
  } else {
    await import(new URL('../dist/cli/main.js', import.meta.url).href);
  }
}
