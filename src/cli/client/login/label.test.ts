import { describe, expect, it } from 'vitest';
import { chooseFlow, defaultLabel } from './label.ts';

const terminal = { stdinTTY: true, stdoutTTY: true, ci: false, ssh: false, agent: undefined };

describe('login flow choice and key label', () => {
  it('prefers --with-token, then a headless flag, then --browser, then the environment', () => {
    expect(chooseFlow({ withToken: 'ao_x', headless: true }, terminal)).toBe('token');
    for (const flags of [{ headless: true }, { browserless: true }, { browser: false }]) expect(chooseFlow(flags, terminal)).toBe('device');
    expect(chooseFlow({ browser: true }, { ...terminal, stdinTTY: false })).toBe('browser');
    expect(chooseFlow({}, terminal)).toBe('browser');
  });

  it('uses the device flow off a terminal, in CI, over SSH and under a coding agent', () => {
    for (const env of [{ stdinTTY: false }, { stdoutTTY: false }, { ci: true }, { ssh: true }, { agent: 'claude-code' }]) {
      expect(chooseFlow({}, { ...terminal, ...env })).toBe('device');
    }
  });

  it('labels keys <prefix>-<user>@<host> with the agent, ci, ssh or cli prefix', () => {
    const who = { user: 'ada', host: 'box' };
    expect(defaultLabel({ ...who, agent: undefined, ci: false, ssh: false })).toBe('cli-ada@box');
    expect(defaultLabel({ ...who, agent: undefined, ci: false, ssh: true })).toBe('ssh-ada@box');
    expect(defaultLabel({ ...who, agent: undefined, ci: true, ssh: true })).toBe('ci-ada@box');
    expect(defaultLabel({ ...who, agent: 'cursor', ci: true, ssh: false })).toBe('cursor-ada@box');
  });
});
