import { defineCommand } from 'citty';
import postgres from 'postgres';
import { randomBytes } from 'node:crypto';

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
    const sql = postgres(args['admin-url'], { max: 1, onnotice: () => {} });
    try {
      const [role] = await sql`select 1 from pg_roles where rolname = ${args.role}`;
      if (role) await sql.unsafe(`ALTER ROLE ${args.role} LOGIN NOSUPERUSER NOBYPASSRLS PASSWORD '${password.replace(/'/g, "''")}'`);
      else await sql.unsafe(`CREATE ROLE ${args.role} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEROLE NOCREATEDB PASSWORD '${password.replace(/'/g, "''")}'`);
      const [db] = await sql`select 1 from pg_database where datname = ${args.database}`;
      if (!db) await sql.unsafe(`CREATE DATABASE ${args.database} OWNER ${args.role}`);
      const url = new URL(args['admin-url']);
      url.username = args.role;
      url.password = password;
      url.pathname = `/${args.database}`;
      process.stdout.write(`DATABASE_URL=${url.toString()}\n`);
    } finally {
      await sql.end({ timeout: 5 });
    }
  },
});

function usage(message: string): never {
  process.stderr.write(`svc db init: ${message}\n`);
  process.exit(2);
}

export default defineCommand({ meta: { name: 'db', description: 'Database administration' }, subCommands: { init } });
