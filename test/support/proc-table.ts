import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';

/**
 * The Linux process table, for tests that must prove a child process is gone (cancelled SDK runs). Processes are
 * found by a marker, typically the test's unique state dir, in their command line or environment (Claude Code gets
 * it as CLAUDE_CONFIG_DIR, Codex as CODEX_HOME and `--cd`), so parallel tests never see each other's children.
 */
export interface ProcessInfo {
  pid: number;
  command: string;
}

function readProc(pid: string, file: string): string {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'latin1');
  } catch {
    return ''; // gone meanwhile, or not ours to read
  }
}

export function processesMentioning(marker: string): ProcessInfo[] {
  const found: ProcessInfo[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    if (Number(pid) === process.pid) continue;
    const cmdline = readProc(pid, 'cmdline');
    if (!cmdline) continue; // zombies and kernel threads have none
    if (cmdline.includes(marker) || readProc(pid, 'environ').includes(marker)) found.push({ pid: Number(pid), command: cmdline.split('\0').join(' ').trim() });
  }
  return found;
}

/** A process's environment as a record (empty when it is gone). */
export function environOf(pid: number): Record<string, string> {
  const entries = readProc(String(pid), 'environ').split('\0').filter(Boolean);
  return Object.fromEntries(entries.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]));
}

/**
 * Polls until no process mentions `marker` and returns what is left when the bound runs out (an empty list when all
 * exited). A bounded poll, not a sleep: it returns as soon as the table is clean.
 */
export async function waitForNoProcesses(marker: string, opts: { timeoutMs?: number; intervalMs?: number } = {}): Promise<ProcessInfo[]> {
  const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
  for (;;) {
    const left = processesMentioning(marker);
    if (left.length === 0 || Date.now() >= deadline) return left;
    await delay(opts.intervalMs ?? 20);
  }
}

/** The owner (real uid) of a process, undefined when it is gone. */
export function uidOf(pid: number): number | undefined {
  const m = /^Uid:\s+(\d+)/m.exec(readProc(String(pid), 'status'));
  return m ? Number(m[1]) : undefined;
}

/** A process and all its descendants that are alive now (the postmaster and its backends, say). */
export function processTree(root: number): ProcessInfo[] {
  const parentOf = new Map<number, number>();
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    const stat = readProc(pid, 'stat');
    if (stat) parentOf.set(Number(pid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
  }
  const tree = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, ppid] of parentOf) if (tree.has(ppid) && !tree.has(pid)) (tree.add(pid), (grew = true));
  }
  return [...tree].filter((pid) => parentOf.has(pid)).map((pid) => ({ pid, command: readProc(String(pid), 'cmdline').split('\0').join(' ').trim() }));
}

/** True while a process exists and is not a zombie. */
export function isRunning(pid: number): boolean {
  const stat = readProc(String(pid), 'stat');
  return stat !== '' && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}
