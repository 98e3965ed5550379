import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // at least two test files at a time (vitest's default is one per core but one): most of a file's time is waiting
    // on servers starting, queues polling and timers, not CPU
    maxWorkers: Math.max(2, availableParallelism() - 1),
    globalSetup: ['test/support/global-setup.ts'],
    // expect.poll waits on something a user would see (a page, a row): 1 s, its default, is short on a loaded machine
    expect: { poll: { timeout: 15_000, interval: 50 } },
  },
});
