import { accountFiles, type HostLayout } from './host.ts';
import type { SandboxSpec } from './spec.ts';

/**
 * The bubblewrap invocation for a SandboxSpec, as data: the options (passed through a pipe with `--args`, so the
 * sandbox's own process list shows no host path), the files written for the sandbox (`--ro-bind-data`, one pipe each)
 * and the descriptors of fd mounts. Descriptor numbers are the child's: 3 carries the options, then one per data
 * file, then one per fd mount, in the order `data` and `fds` list them.
 *
 * Every sandbox gets its own mount, PID, IPC, UTS and cgroup namespaces (and network namespace without network), a
 * fresh /proc, /dev and /tmp, no capabilities, no further user namespaces, and dies with the process that started it.
 */
export interface BwrapInvocation {
  /** bwrap's command line: `--args 3` and the program to run. */
  argv: string[];
  /** NUL-separated options for fd 3. */
  options: string[];
  data: string[];
  fds: number[];
}

export interface BwrapOptions {
  /** Run in a user namespace of its own (always when not root; as root only where the kernel allows it). */
  userns: boolean;
  /** Forbid further user namespaces inside (`--disable-userns`, bubblewrap 0.8 and later). */
  noNestedUserns: boolean;
}

export const ARGS_FD = 3;

export function bwrapInvocation(spec: SandboxSpec, host: HostLayout, opts: BwrapOptions): BwrapInvocation {
  const o: string[] = [];
  if (opts.userns) o.push('--unshare-user');
  if (opts.userns && opts.noNestedUserns) o.push('--disable-userns');
  o.push('--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--hostname', 'sandbox');
  if (!spec.network) o.push('--unshare-net');
  o.push('--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--clearenv');
  for (const [name, value] of Object.entries(spec.env)) o.push('--setenv', name, value);

  for (const s of host.system) {
    if (s.link !== undefined) o.push('--symlink', s.link, s.path);
    else o.push('--ro-bind', s.path, s.path);
  }
  for (const path of host.etc) o.push('--ro-bind', path, path);
  if (spec.network) for (const path of host.etcNetwork) o.push('--ro-bind', path, path);
  const files = Object.entries(accountFiles(host, spec.network));
  const data: string[] = [];
  const dataFd = (content: string) => {
    data.push(content);
    return String(ARGS_FD + data.length);
  };
  for (const [path, content] of files) o.push('--ro-bind-data', dataFd(content), path);
  o.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');

  const fds: number[] = [];
  const readOnlyAtEnd: string[] = [];
  for (const m of spec.mounts) {
    if (m.type === 'tmpfs') {
      o.push('--tmpfs', m.target);
      if (m.readOnly) readOnlyAtEnd.push(m.target);
      continue;
    }
    if ('fd' in m.source) {
      fds.push(m.source.fd);
      o.push(m.writable ? '--bind-fd' : '--ro-bind-fd', String(ARGS_FD + files.length + fds.length), m.target);
    } else {
      o.push(m.writable ? '--bind' : '--ro-bind', m.source.path, m.target);
    }
  }
  // mount points are created above; nothing outside the mounts, /tmp and /dev stays writable
  for (const target of readOnlyAtEnd) o.push('--remount-ro', target);
  o.push('--remount-ro', '/', '--chdir', spec.cwd);
  return { argv: ['--args', String(ARGS_FD), '--', ...spec.argv], options: o, data, fds };
}
