import { defineCommand } from 'citty';

/** `svc billing wallet|cap|checkout`. */
export default defineCommand({
  meta: { name: 'billing', description: 'Credit wallet and spend cap' },
  subCommands: {
    wallet: () => import('./wallet.ts').then((m) => m.default),
    cap: () => import('./cap.ts').then((m) => m.default),
    checkout: () => import('./checkout.ts').then((m) => m.default),
  },
});
