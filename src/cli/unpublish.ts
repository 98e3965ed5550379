import { defineCommand } from 'citty';
import { globalArgs } from './args.ts';
import { openSession } from './client/session.ts';

/** `svc unpublish <profile>`: removes the profile's chat endpoint (its agent keys stop working with it). */
export default defineCommand({
  meta: { name: 'unpublish', description: "Remove a profile's chat endpoint" },
  args: { ...globalArgs, profile: { type: 'positional', description: 'Profile name', required: true } },
  async run({ args }) {
    const { out, api } = openSession(args, { needKey: true });
    await api.request('DELETE', `/api/profiles/${encodeURIComponent(args.profile)}/published`);
    if (out.json) return out.data({ profile: args.profile, unpublished: true });
    out.text(`unpublished ${args.profile}`);
  },
});
