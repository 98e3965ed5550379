import { spawn } from 'node:child_process';
import type { ClientEnv } from '../env.ts';

/** Tries to open a URL in the user's browser: $BROWSER (`none` disables), else the platform's opener. Never throws. */
export function openBrowser(url: string, env: Pick<ClientEnv, 'browser' | 'platform'>): boolean {
  if (env.browser === 'none') return false;
  const [cmd, args] = env.browser
    ? [env.browser, [url]]
    : env.platform === 'darwin'
      ? ['open', [url]]
      : env.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url]]
        : ['xdg-open', [url]];
  try {
    const child = spawn(cmd, args, { stdio: 'ignore', detached: true });
    child.on('error', () => {});
    child.unref();
    return true;
  } catch {
    return false;
  }
}
