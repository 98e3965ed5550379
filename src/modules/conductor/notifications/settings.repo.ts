import type { Tx } from '../../../db/index.ts';
import { jsonb } from '../../../db/index.ts';
import { DEFAULT_SETTINGS, type NotificationSettings } from './settings.schema.ts';

/** SQL for `notification_settings` (sql/0018): one JSON document per tenant; none stored reads as the defaults. */
export async function readSettings(tx: Tx): Promise<NotificationSettings> {
  const row = await tx.selectFrom('notification_settings').select('settings').executeTakeFirst();
  return (row?.settings as NotificationSettings | undefined) ?? DEFAULT_SETTINGS;
}

export async function writeSettings(tx: Tx, tenantId: string, settings: NotificationSettings, updatedBy: string | null): Promise<void> {
  await tx
    .insertInto('notification_settings')
    .values({ tenant_id: tenantId, settings: jsonb(settings), updated_by: updatedBy })
    .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ settings: jsonb(settings), updated_by: updatedBy, updated_at: new Date() }))
    .execute();
}
