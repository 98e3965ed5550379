import { defineCommand } from 'citty';
import { loadConfig, ConfigError } from '../config/config.ts';
import { openDatabase, migrate } from '../db/index.ts';

export default defineCommand({
  meta: { name: 'migrate', description: 'Apply pending SQL migrations (safe to run twice or concurrently)' },
  async run() {
    let config;
    try {
      config = loadConfig(process.env, {});
    } catch (err) {
      if (err instanceof ConfigError) {
        process.stderr.write(`svc: invalid configuration: ${err.message}\n`);
        process.exit(2);
      }
      throw err;
    }
    const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, embedded: config.embeddedPostgres });
    try {
      const applied = await migrate(database);
      process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'up to date\n');
    } finally {
      await database.close();
    }
  },
});
