import { root } from './commands.ts';
import { runCli } from './client/runner.ts';

/** The `svc` command: see commands.ts for the tree and client/runner.ts for exit codes. */
await runCli(root, process.argv.slice(2));
