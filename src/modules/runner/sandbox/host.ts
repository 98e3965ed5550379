import { lstatSync, readlinkSync, statSync } from 'node:fs';

/**
 * What of the host a sandbox sees besides its own mounts: the system folders read-only (programs and libraries), a
 * handful of `/etc` files that programs need to start and to name things (the dynamic linker's cache, alternatives,
 * time zone, TLS roots), and with network the resolver's files. `/etc/passwd`, `/etc/group` and `/etc/hosts` are
 * written for the sandbox instead of the host's, so no host account or address is listed.
 */
export interface HostLayout {
  /** Folders bound read-only, or recreated as the symbolic links they are (merged-/usr systems: `/bin -> usr/bin`). */
  system: Array<{ path: string; link?: string }>;
  /** `/etc` entries bound read-only when present. */
  etc: string[];
  /** `/etc` entries added when the sandbox has network. */
  etcNetwork: string[];
  uid: number;
  gid: number;
}

const SYSTEM = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
const ETC = ['ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'alternatives', 'localtime', 'timezone', 'ssl', 'ca-certificates', 'nsswitch.conf', 'protocols', 'services', 'mime.types'];
const ETC_NETWORK = ['resolv.conf', 'hosts', 'host.conf', 'gai.conf'];

const exists = (path: string) => {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
};

let cached: HostLayout | undefined;

export function hostLayout(): HostLayout {
  if (cached) return cached;
  const system: HostLayout['system'] = [];
  for (const path of SYSTEM) {
    try {
      const st = lstatSync(path);
      if (st.isSymbolicLink()) system.push({ path, link: readlinkSync(path) });
      else if (st.isDirectory()) system.push({ path });
    } catch {
      // not on this system
    }
  }
  cached = {
    system,
    etc: ETC.map((name) => `/etc/${name}`).filter(exists),
    etcNetwork: ETC_NETWORK.map((name) => `/etc/${name}`).filter(exists),
    uid: process.getuid?.() ?? 0,
    gid: process.getgid?.() ?? 0,
  };
  return cached;
}

/** The sandbox's own account files: root, nobody, and the account it runs as when that is neither. */
export function accountFiles(layout: HostLayout, network: boolean): Record<string, string> {
  const { uid, gid } = layout;
  const passwd = ['root:x:0:0:root:/root:/bin/sh', 'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin'];
  const group = ['root:x:0:', 'nogroup:x:65534:'];
  if (uid !== 0 && uid !== 65534) passwd.push(`sandbox:x:${uid}:${gid}:sandbox:/home:/bin/sh`);
  if (gid !== 0 && gid !== 65534) group.push(`sandbox:x:${gid}:`);
  const files: Record<string, string> = { '/etc/passwd': passwd.join('\n') + '\n', '/etc/group': group.join('\n') + '\n' };
  // with network the host's own hosts file is bound (it may name services the agent is meant to reach)
  if (!network || !layout.etcNetwork.includes('/etc/hosts')) files['/etc/hosts'] = '127.0.0.1 localhost sandbox\n::1 localhost\n';
  return files;
}
