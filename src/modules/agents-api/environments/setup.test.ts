import { describe, expect, it } from 'vitest';
import { emptySecrets, emptySpec } from './hosted-spec.ts';
import { commandEnv, needsSetup, setupPlan } from './setup.ts';

describe('the setup plan of a hosted environment', () => {
  const spec = (packages: Partial<ReturnType<typeof emptySpec>['packages']>) => ({ packages: { ...emptySpec().packages, ...packages } });

  it('installs npm, then pip packages (names as arguments, never in the script), then runs the setup commands in order', () => {
    const plan = setupPlan(spec({ npm: ['zod@4', 'left-pad'], python: ['requests==2.32.3'] }), {
      env: {},
      setup_commands: [{ command: 'make deps', cwd: '/workspace/app' }, { command: 'echo ok', cwd: '/workspace' }],
    });
    expect(plan).toEqual([
      { command: 'npm install --global zod@4 left-pad', cwd: '/workspace', script: 'npm install --global --prefix /home/.local --no-audit --no-fund --no-update-notifier "$@"', args: ['zod@4', 'left-pad'] },
      { command: 'pip install requests==2.32.3', cwd: '/workspace', script: 'python3 -m pip install --user --break-system-packages --no-input --disable-pip-version-check "$@"', args: ['requests==2.32.3'] },
      { command: 'make deps', cwd: '/workspace/app', script: 'make deps', args: [] },
      { command: 'echo ok', cwd: '/workspace', script: 'echo ok', args: [] },
    ]);
  });

  it('has nothing to do for an environment without packages or setup commands, and gives its commands only its env', () => {
    expect(setupPlan(spec({}), emptySecrets())).toEqual([]);
    expect(needsSetup(spec({}), { env: { A: '1' }, setup_commands: [] })).toBe(false);
    expect(commandEnv(spec({}), emptySecrets())).toBeUndefined();
    expect(commandEnv(spec({}), { env: { A: '1' }, setup_commands: [] })).toEqual({ A: '1' });
  });

  it('puts installed packages on the PATH (and NODE_PATH) of every command, under the env the environment sets', () => {
    expect(commandEnv(spec({ python: ['x'] }), { env: { A: '1' }, setup_commands: [] })).toEqual({ PATH: '/home/.local/bin:/usr/local/bin:/usr/bin:/bin', NODE_PATH: '/home/.local/lib/node_modules', A: '1' });
    expect(needsSetup(spec({ npm: ['x'] }), emptySecrets())).toBe(true);
  });
});
