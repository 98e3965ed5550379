import { defineCommand } from 'citty';
import { globalArgs } from '../args.ts';
import { formatUsd, parseCapAmount } from '../client/amount.ts';
import { usageError } from '../client/exit.ts';
import { openBrowser } from '../client/login/open-browser.ts';
import { openSession } from '../client/session.ts';

interface Checkout {
  id: string;
  url: string | null;
  cents: number;
  usd: number;
  status: string;
}

/**
 * `svc billing checkout <usd>`: starts a Stripe checkout for a credit pack (admin) and prints its URL; in a terminal
 * the URL is also opened in the browser. The amount must be one of the packs `svc billing wallet` lists.
 */
export default defineCommand({
  meta: { name: 'checkout', description: 'Buy a credit pack: prints (and opens) the checkout URL' },
  args: { ...globalArgs, usd: { type: 'positional', description: 'the pack, in dollars (e.g. 25)', required: true } },
  async run({ args }) {
    const amount = parseCapAmount(String(args.usd));
    if (amount.kind !== 'cents' || amount.cents <= 0) throw usageError(`amount: "${args.usd}" is not a pack; give dollars like 10 or 25`);
    const { out, api, env } = openSession(args, { needKey: true });
    const { data } = await api.request<Checkout>('POST', '/api/billing/checkout', { body: { cents: amount.cents } });
    const shown = { id: data.id, url: data.url, cents: data.cents, usd: data.usd, status: data.status };
    if (out.json) return out.data(shown);
    out.fields([
      ['checkout', shown.id],
      ['amount', formatUsd(shown.cents)],
      ['url', shown.url],
    ]);
    if (env.stdoutTTY && shown.url && openBrowser(shown.url, env)) out.log.info('opened the checkout in your browser');
  },
});
