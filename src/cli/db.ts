import { defineCommand } from 'citty';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, ConfigError } from '../config/config.ts';
import { provisionAppRole } from '../db/provision.ts';
import { clusterDir, socketDirFor, socketUrl, SUPERUSER } from '../db/embedded/index.ts';

/** `svc db init`: creates an unprivileged role and a database it owns on a PostgreSQL server, prints DATABASE_URL. */
const init = defineCommand({
  meta: { name: 'init', description: 'Create the app role (no SUPERUSER, no BYPASSRLS) and its database on a server' },
  args: {
    'admin-url': { type: 'string', required: true, description: 'a superuser URL, e.g. postgres://postgres@127.0.0.1:5432/postgres' },
    role: { type: 'string', default: 'svc_app', description: 'role to create' },
    database: { type: 'string', default: 'svc', description: 'database to create' },
    password: { type: 'string', description: 'password for the role (generated when omitted)' },
  },
  async run({ args }) {
    const ident = /^[a-z_][a-z0-9_]{0,62}$/;
    if (!ident.test(args.role)) usage('--role: lowercase letters, digits and underscores');
    if (!ident.test(args.database)) usage('--database: lowercase letters, digits and underscores');
    if (!/^postgres(ql)?:\/\//.test(args['admin-url'])) usage('--admin-url: a postgres:// URL');
    const password = args.password ?? randomBytes(18).toString('base64url');
    await provisionAppRole(args['admin-url'], { role: args.role, database: args.database, password });
    const url = new URL(args['admin-url']);
    if (url.searchParams.has('host')) {
      // libpq's unix-socket form (`svc db url`): a URL without a host carries its credentials as parameters
      url.searchParams.set('user', args.role);
      url.searchParams.set('password', password);
    } else {
      url.username = args.role;
      url.password = password;
    }
    url.pathname = `/${args.database}`;
    process.stdout.write(`DATABASE_URL=${url.toString()}\n`);
  },
});

/**
 * `svc db url`: the embedded cluster's connection string, for psql and pg_dump (and for DATABASE_URL of another svc
 * process while this one runs). As `svc_app`, row-level security hides every row outside a tenant transaction, so
 * backups use `--superuser`.
 */
const url = defineCommand({
  meta: { name: 'url', description: "Print the embedded cluster's connection string (for psql and pg_dump)" },
  args: {
    superuser: { type: 'boolean', description: `as the cluster's superuser "${SUPERUSER}" (what pg_dump needs: row-level security is forced for the app role)` },
  },
  run({ args }) {
    let config;
    try {
      config = loadConfig(process.env, {});
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      usage(`invalid configuration: ${err.message}`, 'url');
    }
    if (config.databaseUrl === 'memory') usage('DATABASE_URL=memory is a throwaway cluster that lives only inside its svc process', 'url');
    if (config.databaseUrl) {
      process.stdout.write(`${config.databaseUrl}\n`); // a server: the URL svc itself uses
      return;
    }
    const dir = clusterDir(config.dataDir);
    process.stdout.write(`${socketUrl(socketDirFor(dir), args.superuser ? SUPERUSER : undefined)}\n`);
    if (!existsSync(join(dir, 'postmaster.pid'))) process.stderr.write(`svc db url: the embedded cluster in ${dir} is not running; it runs while \`svc serve\` does\n`);
  },
});

function usage(message: string, command = 'init'): never {
  process.stderr.write(`svc db ${command}: ${message}\n`);
  process.exit(2);
}

export default defineCommand({ meta: { name: 'db', description: 'Database administration' }, subCommands: { init, url } });
