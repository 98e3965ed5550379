import { defineCommand } from 'citty';

/** `svc context list|use|show`. */
export default defineCommand({
  meta: { name: 'context', description: 'List, switch and show contexts' },
  subCommands: {
    list: () => import('./list.ts').then((m) => m.default),
    use: () => import('./use.ts').then((m) => m.default),
    show: () => import('./show.ts').then((m) => m.default),
  },
});
