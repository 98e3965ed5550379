import type { Tx } from '../../../db/index.ts';
import { jsonb } from '../../../db/index.ts';
import { DEFAULT_EMAIL, type EmailSettings } from './settings.schema.ts';

/**
 * SQL for `notification_settings` (sql/0018): one JSON document per tenant holding its email settings (its webhooks
 * moved to `webhook_endpoints` in sql/0027); none stored reads as the defaults.
 */
export async function readEmailSettings(tx: Tx): Promise<EmailSettings> {
  const row = await tx.selectFrom('notification_settings').select('settings').executeTakeFirst();
  const stored = (row?.settings as { email?: EmailSettings } | undefined)?.email;
  return stored ?? DEFAULT_EMAIL;
}

export async function writeEmailSettings(tx: Tx, tenantId: string, email: EmailSettings, updatedBy: string | null): Promise<void> {
  const settings = jsonb({ email });
  await tx
    .insertInto('notification_settings')
    .values({ tenant_id: tenantId, settings, updated_by: updatedBy })
    .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ settings, updated_by: updatedBy, updated_at: new Date() }))
    .execute();
}
