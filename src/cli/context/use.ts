import { defineCommand } from 'citty';
import { globalArgs } from '../args.ts';
import { loadConfigFile, saveConfigFile } from '../client/config-file.ts';
import { usageError } from '../client/exit.ts';
import { select } from '../client/prompt.ts';
import { openOutput } from '../client/session.ts';

/** `svc context use [name]`: sets currentContext; a picker in a terminal when the name is omitted. Always text. */
export default defineCommand({
  meta: { name: 'use', description: 'Make a context the current one' },
  args: {
    ...globalArgs,
    name: { type: 'positional', required: false, description: 'the context (a picker in a terminal when omitted)' },
  },
  async run({ args }) {
    const { env, out } = openOutput(args);
    const file = loadConfigFile(env.configDir, { warn: (m) => out.log.warn(m), platform: env.platform });
    const names = Object.keys(file.config.contexts).sort();
    if (names.length === 0) throw usageError('there are no contexts in the config file', 'run `svc auth login` first');
    let name = args.name as string | undefined;
    if (!name) {
      if (!(env.stdinTTY && env.stdoutTTY)) throw usageError('context use: a context name is required in scripts', `contexts: ${names.join(', ')}`);
      name = await select('Use which context?', names, file.config.currentContext);
    }
    if (!names.includes(name)) throw usageError(`context "${name}" does not exist (contexts: ${names.join(', ')})`);
    file.config.currentContext = name;
    saveConfigFile(env.configDir, file.config);
    out.text(`Switched to context "${name}".`);
  },
});
