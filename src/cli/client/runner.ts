import { renderUsage, runCommand, type ArgsDef, type CommandDef } from 'citty';
import type { ConsolaInstance } from 'consola';
import { CliError, EXIT, installInterruptHandler, isInterrupted } from './exit.ts';
import { toCliError } from './http.ts';
import { closest } from '../../shared/suggest.ts';
import { describeError } from '../../shared/errors.ts';

/**
 * Runs the citty tree with the client's exit codes: usage errors (unknown command or flag, missing argument) exit 2
 * with the usage on stderr; CliError exits with its code; request failures map through toCliError; Ctrl-C exits 130.
 */
type AnyCommand = CommandDef<ArgsDef>;
const resolve = async <T>(v: T | (() => T | Promise<T>) | Promise<T>): Promise<T> => (typeof v === 'function' ? await (v as () => T | Promise<T>)() : await v);

const camel = (s: string) => s.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());

async function valueFlags(cmd: AnyCommand): Promise<Set<string>> {
  const args = (await resolve(cmd.args ?? {})) as ArgsDef;
  const names = new Set<string>();
  for (const [name, def] of Object.entries(args)) {
    if (def.type !== 'string' && def.type !== 'enum') continue;
    for (const n of [name, camel(name), kebab(name), ...([] as string[]).concat((def as { alias?: string | string[] }).alias ?? [])]) names.add(n);
  }
  return names;
}

/** The command a raw argument list lands on, its parents, and the arguments left for it. */
export async function resolveLeaf(cmd: AnyCommand, rawArgs: string[], parents: AnyCommand[] = []): Promise<{ cmd: AnyCommand; parents: AnyCommand[]; rest: string[] }> {
  const subs = (await resolve(cmd.subCommands ?? {})) as Record<string, unknown>;
  if (Object.keys(subs).length === 0) return { cmd, parents, rest: rawArgs };
  const values = await valueFlags(cmd);
  for (let i = 0; i < rawArgs.length; i++) {
    const a = rawArgs[i];
    if (a === '--') break;
    if (a.startsWith('-')) {
      if (!a.includes('=') && values.has(a.replace(/^-{1,2}/, ''))) i++;
      continue;
    }
    if (!(a in subs)) return { cmd, parents, rest: rawArgs };
    const sub = (await resolve(subs[a] as AnyCommand)) as AnyCommand;
    return resolveLeaf(sub, rawArgs.slice(i + 1), [...parents, cmd]);
  }
  return { cmd, parents, rest: rawArgs };
}

/** `--debug`, taken by every command: an unexpected error prints its stack trace (SVC_DEBUG=1 does the same). */
export const DEBUG_FLAG = '--debug';

/** citty accepts any flag; an unknown one is almost always a typo, so the client refuses it (exit 2), with the flag meant. */
async function checkFlags(cmd: AnyCommand, rest: string[]): Promise<void> {
  const args = (await resolve(cmd.args ?? {})) as ArgsDef;
  const known = new Set<string>(['help', 'h', 'debug']);
  for (const [name, def] of Object.entries(args)) {
    if (def.type === 'positional') continue;
    const aliases = ([] as string[]).concat((def as { alias?: string | string[] }).alias ?? []);
    for (const n of [name, camel(name), kebab(name), ...aliases]) {
      known.add(n);
      if (def.type === 'boolean') known.add(`no-${n}`);
    }
  }
  for (const a of rest) {
    if (a === '--') break;
    if (!a.startsWith('-') || a === '-' || /^-\d/.test(a)) continue;
    const name = a.replace(/^-{1,2}/, '').split('=')[0];
    if (known.has(name)) continue;
    const meant = closest(name, [...known].filter((k) => k.length > 1 && !k.startsWith('no-')));
    throw new CliError(EXIT.usage, `unknown option ${a.split('=')[0]}${meant ? ` (did you mean --${meant}?)` : ''}`, `\`${pathOf()} --help\` lists its options`);
  }
}

/** The command as typed (`svc profiles`), for hints. */
let commandPath = 'svc';
const pathOf = () => commandPath;

/** The names of a command's subcommands (for "did you mean"). */
async function subcommandNames(cmd: AnyCommand): Promise<string[]> {
  return Object.keys((await resolve(cmd.subCommands ?? {})) as Record<string, unknown>);
}

// citty colours its usage unless CI or NO_COLOR is set; off a terminal the escapes are noise.
const plain = (s: string, tty: boolean | undefined) => (tty ? s : s.replace(/\u001B\[[0-9;]*m/g, ''));

async function usage(cmd: AnyCommand, parents: AnyCommand[], tty = process.stdout.isTTY): Promise<string> {
  return plain(await renderUsage(cmd, parents.at(-1)), tty);
}

async function finish(code: number): Promise<never> {
  await new Promise<void>((r) => process.stdout.write('', () => r()));
  process.exit(code);
}

/** Server-side commands keep their own signal handling (graceful shutdown) and their process alive. */
const SERVER_COMMANDS = new Set(['serve', 'migrate', 'db']);

/** consola, loaded for a message only: importing it costs about 30 ms of CPU, a tenth of a server's restart. */
let consola: Promise<ConsolaInstance> | undefined;
const logger = () =>
  (consola ??= import('consola').then(({ createConsola }) =>
    createConsola({ fancy: process.stderr.isTTY === true, stdout: process.stderr, stderr: process.stderr, formatOptions: { date: false } }),
  ));

/** `--debug`: the stack trace of an error and of each cause under it. */
function printStacks(err: unknown): void {
  for (let e = err; e !== undefined; e = e instanceof Error ? e.cause : undefined) process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
}

/**
 * A reader that went away (`svc runs --json | head`) is no error of ours: the rest of the output has nowhere to go,
 * so the process ends quietly instead of dying on EPIPE with a stack trace.
 */
function quietOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(EXIT.ok);
      throw err;
    });
  }
}

export async function runCli(root: AnyCommand, rawArgs: string[]): Promise<void> {
  let leaf: Awaited<ReturnType<typeof resolveLeaf>> | undefined;
  const debug = rawArgs.includes(DEBUG_FLAG) || ['1', 'true'].includes(process.env.SVC_DEBUG ?? '');
  rawArgs = rawArgs.filter((a) => a !== DEBUG_FLAG);
  quietOnClosedPipe();
  try {
    leaf = await resolveLeaf(root, rawArgs);
    for (const c of [...leaf.parents, leaf.cmd].filter((c) => c !== root)) commandPath += ` ${(await resolve(c.meta))?.name ?? ''}`;
    const top = [...leaf.parents.slice(1), leaf.cmd][0];
    const topName = top === root ? undefined : (await resolve(top.meta))?.name;
    if (!topName || !SERVER_COMMANDS.has(topName)) {
      const log = await logger();
      installInterruptHandler((code) => void finish(code), (m) => log.warn(m));
    }
    if (rawArgs.includes('--help') || rawArgs.includes('-h')) {
      process.stdout.write((await usage(leaf.cmd, leaf.parents)) + '\n');
      return finish(EXIT.ok);
    }
    if (rawArgs.length === 1 && (rawArgs[0] === '--version' || rawArgs[0] === '-v')) {
      process.stdout.write(`${(await resolve(root.meta))?.version}\n`);
      return finish(EXIT.ok);
    }
    await checkFlags(leaf.cmd, leaf.rest);
    await runCommand(root, { rawArgs });
    // Success ends naturally (a server keeps running); client commands leave no handles open.
    process.exitCode = EXIT.ok;
  } catch (err) {
    // Ctrl-C aborted what the command was doing; the interrupt handler finishes its cleanups and exits 130.
    if (isInterrupted()) return new Promise<void>(() => {});
    const log = await logger();
    if ((err as { name?: string })?.name === 'CLIError') {
      // an unknown command: the one meant, not the whole usage
      const unknown = (err as { code?: string }).code === 'E_UNKNOWN_COMMAND' ? /^Unknown command (.*)$/.exec(plain((err as Error).message, false))?.[1]?.replace(/^`|`$/g, '') : undefined;
      if (unknown !== undefined && leaf) {
        const meant = closest(unknown, await subcommandNames(leaf.cmd));
        log.error(`unknown command "${unknown}"${meant ? ` (did you mean ${meant}?)` : ''}`);
        log.info(`\`${pathOf()} --help\` lists the commands`);
        return finish(EXIT.usage);
      }
      // a missing argument: which one and what it is, with the usage line, not the whole help
      const missing = /^Missing required (?:positional )?argument: (?:--)?(\S+)$/.exec(plain((err as Error).message, false))?.[1];
      if (missing && leaf) {
        const args = (await resolve(leaf.cmd.args ?? {})) as ArgsDef;
        const [name, def] = Object.entries(args).find(([n]) => n.toLowerCase() === missing.toLowerCase()) ?? [missing, undefined];
        const what = def?.description ? ` (${def.description.replace(/\s*\(required\)$/i, '')})` : '';
        log.error(`${def?.type === 'positional' ? `<${name.toUpperCase()}>` : `--${name}`} is required${what}`);
        const line = /USAGE (.*)/.exec(plain(await usage(leaf.cmd, leaf.parents, false), false))?.[1];
        log.info(line ? `usage: ${line.startsWith('svc') ? line : `svc ${line}`}` : `\`${pathOf()} --help\` lists its arguments`);
        return finish(EXIT.usage);
      }
      if (leaf) process.stderr.write((await usage(leaf.cmd, leaf.parents, process.stderr.isTTY).catch(() => '')) + '\n\n');
      log.error(plain((err as Error).message, process.stderr.isTTY));
      return finish(EXIT.usage);
    }
    const mapped = toCliError(err);
    if (mapped) {
      log.error(mapped.message);
      if (mapped.hint) log.info(mapped.hint);
      if (debug) printStacks(err);
      return finish(mapped.code);
    }
    // Unexpected: its message, and its stack trace only when asked for.
    log.error(describeError(err));
    if (debug) printStacks(err);
    else log.info(`run again with ${DEBUG_FLAG} for the stack trace`);
    return finish(EXIT.failure);
  }
}
