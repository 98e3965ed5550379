import { defineCommand } from 'citty';

/** `svc auth login|status|logout`. */
export default defineCommand({
  meta: { name: 'auth', description: 'Sign in, check and sign out' },
  subCommands: {
    login: () => import('./login.ts').then((m) => m.default),
    status: () => import('./status.ts').then((m) => m.default),
    logout: () => import('./logout.ts').then((m) => m.default),
  },
});
