import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { PACKAGE_ROOT, RUNNING_FROM } from '../../../shared/package-root.ts';
import type { SandboxMount } from '../sandbox/index.ts';

/**
 * The package this runner runs from, mounted read-only under `/opt` (not at its host path, which a session mount such
 * as `/work` could cover), with the Node binary running it: the process substrate always runs its workers this way, the
 * container substrate with SVC_WORKER_PROGRAM=mount. A clone's boot bundle (bin/bundle.js, `.svc-bundle/`) is mounted
 * with the inputs its stamp names, so bin/svc.js inside decides from the same files as outside. The worker runs the
 * code its runner runs: a runner on the sources (no bundle, a stale one, or SVC_NO_BUNDLE=1) starts its workers with
 * SVC_NO_BUNDLE=1, so a bundle built meanwhile does not mix two versions.
 */
export const codeEnv = (): Record<string, string> => (RUNNING_FROM === 'src' ? { SVC_NO_BUNDLE: '1' } : {});

export function programMounts(): { argv: [string, ...string[]]; hostArgv: [string, ...string[]]; mounts: SandboxMount[] } {
  const root = PACKAGE_ROOT;
  const map: Array<[string, string]> = [];
  let inside: string;
  if (basename(dirname(root)) === 'node_modules') {
    // installed as a dependency: its own dependencies sit beside it
    map.push([dirname(root), '/opt/node_modules']);
    inside = `/opt/node_modules/${basename(root)}`;
  } else {
    // .svc-bundle: the boot bundle; package-lock.json, rolldown.config.js and patches/: its inputs beside src/ and
    // package.json, which bin/svc.js compares with the bundle's stamp
    for (const p of ['src', 'bin', 'package.json', 'package-lock.json', 'rolldown.config.js', 'patches', '.svc-bundle', 'node_modules']) {
      if (existsSync(join(root, p))) map.push([join(root, p), `/opt/svc/${p}`]);
    }
    inside = '/opt/svc';
  }
  const mapped = (host: string) => {
    const hit = map.find(([from]) => host.startsWith(from + '/'));
    return hit ? hit[1] + host.slice(hit[0].length) : undefined;
  };
  let node = mapped(process.execPath);
  if (!node) {
    map.push([process.execPath, '/opt/node/bin/node']);
    node = '/opt/node/bin/node';
  }
  const mounts: SandboxMount[] = map.filter(([from]) => existsSync(from)).map(([from, to]) => ({ type: 'bind', source: { path: from }, target: to, writable: false }));
  return { argv: [node, `${inside}/bin/svc.js`, 'serve', '--role=worker'], hostArgv: [process.execPath, join(root, 'bin', 'svc.js'), 'serve', '--role=worker'], mounts };
}

