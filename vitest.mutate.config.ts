import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

/**
 * The tests `npm run mutate` (StrykerJS) tries each mutant of the run path against: the run machinery's unit tests
 * and the in-process flows that stream, resume and fail to store runs (svc started in the test process, where a mutant
 * is active; tests that spawn svc processes would run unmutated code and are left out).
 */
export default defineConfig({
  test: {
    ...base.test,
    include: [
      'src/modules/conductor/runs/*.test.ts',
      'test/flows/run-resume.test.ts',
      'test/flows/run-writes.test.ts',
    ],
  },
});
