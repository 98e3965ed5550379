import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonb, loadMigrations, migrate, openDatabase, withTenant, type Database } from '../../src/db/index.ts';
import { createSecretBox } from '../../src/shared/secret-box.ts';
import { signWebhook } from '../../src/modules/conductor/notifications/webhook-signature.ts';
import { Webhook } from 'standardwebhooks';
import { createTestDatabase } from '../support/pg.ts';

/**
 * The notification settings' webhooks move into webhook endpoints (sql/0027): a tenant's webhooks saved before the
 * migration are endpoints after it, with the same ids, URLs and order, their sealed secrets still opening to what the
 * receivers hold, and an empty event list meaning what it meant (every notification event). The email settings stay.
 */
let database: Database;
let drop: () => Promise<void>;
const box = createSecretBox('webhooks-migration-secrets-key');
const secrets = { whk_a: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', whk_b: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD' };
const seal = (id: keyof typeof secrets) => box.seal(secrets[id], `notification_settings:acme:${id}`);

beforeAll(async () => {
  const db = await createTestDatabase();
  drop = db.drop;
  database = await openDatabase({ url: db.url, dataDir: '/nonexistent' });
  await migrate(database, loadMigrations().filter((m) => m.name < '0027'));
  await withTenant(database.db, 'acme', async (tx) => {
    await tx.insertInto('tenants').values({ id: 'acme', name: 'Acme' }).execute();
    const settings = {
      email: { enabled: true, to: ['ops@example.com'], from: null },
      webhooks: [
        { id: 'whk_a', url: 'https://hooks.example.com/a', secret: seal('whk_a'), events: [] },
        { id: 'whk_b', url: 'https://hooks.example.com/b', secret: seal('whk_b'), events: ['run.failed', 'credit.low'] },
      ],
    };
    await tx.insertInto('notification_settings').values({ tenant_id: 'acme', settings: jsonb(settings), updated_by: 'key:k1' }).execute();
  });
});
afterAll(async () => {
  await database?.close();
  await drop?.();
});

describe('the webhooks migration', () => {
  it('makes each settings webhook an endpoint with its secret, and leaves the email settings', async () => {
    expect(await migrate(database)).toContain('0027_webhooks.sql');
    const rows = await withTenant(database.db, 'acme', (tx) => tx.selectFrom('webhook_endpoints').select(['id', 'url', 'events', 'enabled', 'position', 'secret']).orderBy('position').execute());
    expect(rows.map(({ secret: _s, ...r }) => r)).toEqual([
      { id: 'whk_a', url: 'https://hooks.example.com/a', events: ['notify', 'run.failed', 'automation.disabled', 'workflow.paused', 'credit.low'], enabled: true, position: 0 },
      { id: 'whk_b', url: 'https://hooks.example.com/b', events: ['run.failed', 'credit.low'], enabled: true, position: 1 },
    ]);
    for (const r of rows) {
      const secret = box.open(r.secret, `notification_settings:acme:${r.id}`);
      expect(secret).toBe(secrets[r.id as keyof typeof secrets]);
      // what a receiver holding the old secret verifies
      const body = '{"type":"webhook.test"}';
      expect(new Webhook(secrets[r.id as keyof typeof secrets]).verify(body, signWebhook(secret, 'evt_1', Math.floor(Date.now() / 1000), body))).toEqual({ type: 'webhook.test' });
    }
    const settings = await withTenant(database.db, 'acme', (tx) => tx.selectFrom('notification_settings').select('settings').executeTakeFirstOrThrow());
    expect(settings.settings).toEqual({ email: { enabled: true, to: ['ops@example.com'], from: null } });
    expect(await migrate(database)).toEqual([]);
  });
});
