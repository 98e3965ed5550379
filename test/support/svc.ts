import { startSvc, type SvcInstance } from '../../src/index.ts';
import type { Flags } from '../../src/config/config.ts';

/** Starts an svc instance for a test (in-process, ephemeral port) and gives a tiny authenticated client. */
export interface TestSvc extends SvcInstance {
  api(path: string, init?: RequestInit & { key?: string | null; json?: unknown }): Promise<Response>;
}

/** `flags.port`: a fixed port (for a runner that must reach this conductor at a known SVC_CONDUCTOR_URL). */
export async function startTestSvc(env: Record<string, string | undefined> = {}, role = 'conductor', flags: Flags = {}): Promise<TestSvc> {
  const instance = await startSvc({
    env: { SVC_BOOTSTRAP_TOKEN: 'ao_test_bootstrapbootstrapbootstrap01', ...env },
    flags: { ...flags, role },
  });
  return {
    ...instance,
    api(path, init = {}) {
      const { key = instance.key, json, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (key) headers.set('authorization', `Bearer ${key}`);
      if (json !== undefined) headers.set('content-type', 'application/json');
      return fetch(instance.url + path, { ...rest, headers, body: json !== undefined ? JSON.stringify(json) : rest.body });
    },
  };
}
