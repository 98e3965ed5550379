import { defineCommand, type ArgsDef, type CommandDef } from 'citty';
import { globalArgs } from './args.ts';
import { bashScript, fishScript, zshScript, type CommandNode } from './client/completion-scripts.ts';
import { usageError } from './client/exit.ts';

type AnyCommand = CommandDef<ArgsDef>;
const resolve = async <T>(v: unknown): Promise<T> => (typeof v === 'function' ? await (v as () => Promise<T>)() : await (v as Promise<T>));

/** Walks the command tree (loading every command) into path → words. */
async function collect(cmd: AnyCommand, path: string, nodes: CommandNode[]): Promise<void> {
  const args = ((await resolve(cmd.args ?? {})) ?? {}) as ArgsDef;
  const subs = ((await resolve(cmd.subCommands ?? {})) ?? {}) as Record<string, unknown>;
  const flags = Object.entries(args).filter(([, d]) => d.type !== 'positional').map(([name]) => `--${name}`);
  const words = [...Object.keys(subs), ...flags, '--help'];
  if (path === 'completion') words.unshift('bash', 'zsh', 'fish');
  nodes.push({ path, words });
  for (const [name, sub] of Object.entries(subs)) await collect(await resolve<AnyCommand>(sub), path ? `${path} ${name}` : name, nodes);
}

/** `svc completion bash|zsh|fish`: prints a completion script for the shell. */
export default defineCommand({
  meta: { name: 'completion', description: 'Print a shell completion script (bash, zsh or fish)' },
  args: { ...globalArgs, shell: { type: 'positional', description: 'bash | zsh | fish' } },
  async run({ args }) {
    const shell = String(args.shell);
    const make = { bash: bashScript, zsh: zshScript, fish: fishScript }[shell];
    if (!make) throw usageError(`completion: unknown shell "${shell}"; expected bash, zsh or fish`);
    const { root } = await import('./commands.ts');
    const nodes: CommandNode[] = [];
    await collect(root as AnyCommand, '', nodes);
    process.stdout.write(make(nodes));
  },
});
