import { defineCommand } from 'citty';
import { globalArgs } from './args.ts';
import { printList } from './client/list.ts';
import { openSession } from './client/session.ts';

interface Profile {
  name: string;
  runtime: string;
  model?: string;
  workerMode?: string;
}

/** `svc profiles`: the tenant's profiles (name, runtime, model). */
export default defineCommand({
  meta: { name: 'profiles', description: 'List profiles' },
  args: { ...globalArgs },
  async run({ args }) {
    const { out, api } = openSession(args, { needKey: true });
    const profiles = await api.get<Profile[]>('/api/profiles');
    printList(out, profiles, (p) => [p.name, p.runtime, p.model ?? null], ['name', 'runtime', 'model']);
  },
});
