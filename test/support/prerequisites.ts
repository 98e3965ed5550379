/**
 * `npm test` runs this first (`pretest`): the suite drives Debian's Chromium (browser flows) and runs agents' commands
 * in bubblewrap. Missing ones are installed from Debian's packages when this machine can (root with apt-get), and the
 * run says so; otherwise it says what to install, and fails under CI=true (locally those tests are skipped). The
 * runtime_a/runtime_b tests need the Claude Code and Codex SDKs, which `npm ci` leaves out: without them the run stops
 * here and names the command that installs them.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const NEEDED = [
  { pkg: 'chromium', present: () => existsSync('/usr/bin/chromium'), why: 'the browser flows (CLI login, the chat page)' },
  { pkg: 'bubblewrap', present: () => spawnSync('bwrap', ['--version']).status === 0, why: 'the command sandbox and the security suite' },
];

const missing = NEEDED.filter((n) => !n.present());
if (missing.length) {
  const names = missing.map((m) => m.pkg);
  const canInstall = process.getuid?.() === 0 && spawnSync('apt-get', ['--version']).status === 0;
  if (canInstall) {
    process.stderr.write(`[svc tests] installing Debian packages ${names.join(', ')} (${missing.map((m) => m.why).join('; ')})\n`);
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
    execFileSync('apt-get', ['install', '-y', '-qq', ...names], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  } else {
    const msg = `[svc tests] missing ${names.join(', ')} (${missing.map((m) => `${m.pkg}: ${m.why}`).join('; ')}): install them (Debian: apt-get install ${names.join(' ')})`;
    process.stderr.write(`${msg}${process.env.CI ? '' : '; their tests are skipped'}\n`);
    if (process.env.CI) process.exit(1);
  }
}

const SDKS = ['@anthropic-ai/claude-agent-sdk', '@openai/codex-sdk'];
const resolvable = (pkg: string) => {
  try {
    import.meta.resolve(pkg);
    return true;
  } catch {
    return false;
  }
};
const absent = SDKS.filter((pkg) => !resolvable(pkg));
if (absent.length) {
  process.stderr.write(`[svc tests] ${absent.join(' and ')} not installed (npm ci leaves the runtime SDKs out; the runtime_a and runtime_b tests need them): run npm run install:runtimes, then npm test\n`);
  process.exit(1);
}
