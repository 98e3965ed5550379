import { z } from 'zod';
import { NOTIFICATION_CHANNEL_PATTERN } from '../../../contracts/run-callbacks.ts';
import { defineTool, ToolFailure } from './tool.ts';

/**
 * `notify`: asks the conductor's notification service to send a message, as the run's tenant (run token). The
 * conductor stores it and reports its delivery status; the tool returns that record.
 */
export const notifyTool = defineTool({
  name: 'notify',
  description: 'Ask the platform to send a notification (channel email by default) to a recipient or the tenant inbox.',
  input: z.object({
    message: z.string().min(1).max(16_384),
    channel: z.string().regex(NOTIFICATION_CHANNEL_PATTERN).default('email'),
    to: z.string().min(1).max(320).optional(),
    subject: z.string().max(200).optional(),
  }),
  scope: 'tenant',
  capability: 'notify.send',
  async run(i, ctx) {
    const token = ctx.session.runToken;
    if (!token) throw new ToolFailure('notify needs a run started by the conductor (this session has no run token)');
    if (!ctx.conductor) throw new ToolFailure('notify is unavailable: this runner has no conductor configured (SVC_CONDUCTOR_URL)');
    return ctx.conductor.notify(token, i, ctx.signal);
  },
  text: (n: { id: string; status: string; detail: string }) => `notification ${n.id}: ${n.status} (${n.detail})`,
});
