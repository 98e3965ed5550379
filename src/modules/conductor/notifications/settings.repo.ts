import type { Tx } from '../../../db/index.ts';
import { jsonb } from '../../../db/index.ts';
import type { SecretBox } from '../../../shared/secret-box.ts';
import { DEFAULT_SETTINGS, type NotificationSettings } from './settings.schema.ts';

/**
 * SQL for `notification_settings` (sql/0018): one JSON document per tenant; none stored reads as the defaults. Webhook
 * secrets are sealed at rest (AES-GCM under SVC_SECRETS_KEY, bound to the tenant and the webhook).
 */
const aadOf = (tenantId: string, webhookId: string) => `notification_settings:${tenantId}:${webhookId}`;

export async function readSettings(tx: Tx, tenantId: string, box: SecretBox): Promise<NotificationSettings> {
  const row = await tx.selectFrom('notification_settings').select('settings').executeTakeFirst();
  const stored = row?.settings as NotificationSettings | undefined;
  if (!stored) return DEFAULT_SETTINGS;
  return { ...stored, webhooks: stored.webhooks.map((w) => ({ ...w, secret: box.open(w.secret, aadOf(tenantId, w.id)) })) };
}

export async function writeSettings(tx: Tx, tenantId: string, settings: NotificationSettings, updatedBy: string | null, box: SecretBox): Promise<void> {
  const sealed = { ...settings, webhooks: settings.webhooks.map((w) => ({ ...w, secret: box.seal(w.secret, aadOf(tenantId, w.id)) })) };
  await tx
    .insertInto('notification_settings')
    .values({ tenant_id: tenantId, settings: jsonb(sealed), updated_by: updatedBy })
    .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ settings: jsonb(sealed), updated_by: updatedBy, updated_at: new Date() }))
    .execute();
}
