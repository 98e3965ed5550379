import { ConfigError, int } from './parse.ts';

export interface NotificationsConfig {
  /** SVC_SMTP_URL: the SMTP server email notifications go through (smtp:// or smtps://, credentials in the URL); unset: no email. */
  smtpUrl: string | undefined;
  /** SVC_SMTP_FROM: the sender when the tenant's settings name none (default svc@localhost). */
  smtpFrom: string;
  /** SVC_NOTIFY_RETRY_LIMIT: retries of a failed delivery after its first attempt (default 8). */
  retryLimit: number;
  /** SVC_NOTIFY_RETRY_DELAY_S: seconds before the first retry, doubled per attempt (default 10; 0 retries at once, for tests). */
  retryDelaySeconds: number;
  /** SVC_NOTIFY_TIMEOUT_MS: how long one email or webhook attempt may take (default 10 s). */
  timeoutMs: number;
  /**
   * SVC_WEBHOOK_SCHEDULE_S: seconds before each webhook attempt, the first counted from the event, each next from the
   * attempt before (default `0,5,300,1800,7200,18000,36000,36000`: 8 attempts over 27.6 hours). Tests use a short one.
   */
  webhookSchedule: readonly number[];
  /** SVC_WEBHOOK_DISABLE_AFTER_S: an endpoint failing every attempt for this long is disabled (default 259200, 3 days). */
  webhookDisableAfterSeconds: number;
  /** SVC_WEBHOOK_ROTATION_OVERLAP_S: after a secret rotation, how long the old secret signs too (default 86400, 24 hours). */
  webhookRotationOverlapSeconds: number;
}

/** Notification deliveries (conductor role): email over SMTP and webhooks, their retries and schedule. */
export function notificationsConfig(env: Record<string, string | undefined>): NotificationsConfig {
  return {
    smtpUrl: smtpUrl(env.SVC_SMTP_URL),
    smtpFrom: env.SVC_SMTP_FROM || 'svc@localhost',
    retryLimit: int('SVC_NOTIFY_RETRY_LIMIT', env.SVC_NOTIFY_RETRY_LIMIT, 8, 0, 100),
    retryDelaySeconds: int('SVC_NOTIFY_RETRY_DELAY_S', env.SVC_NOTIFY_RETRY_DELAY_S, 10, 0, 3600),
    timeoutMs: int('SVC_NOTIFY_TIMEOUT_MS', env.SVC_NOTIFY_TIMEOUT_MS, 10_000, 100, 600_000),
    webhookSchedule: webhookSchedule(env.SVC_WEBHOOK_SCHEDULE_S),
    webhookDisableAfterSeconds: int('SVC_WEBHOOK_DISABLE_AFTER_S', env.SVC_WEBHOOK_DISABLE_AFTER_S, 3 * 86_400, 1, 365 * 86_400),
    webhookRotationOverlapSeconds: int('SVC_WEBHOOK_ROTATION_OVERLAP_S', env.SVC_WEBHOOK_ROTATION_OVERLAP_S, 86_400, 0, 30 * 86_400),
  };
}

/** Svix's schedule: at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (27.6 hours in all). */
export const DEFAULT_WEBHOOK_SCHEDULE = [0, 5, 300, 1800, 7200, 18_000, 36_000, 36_000] as const;

/** SVC_WEBHOOK_SCHEDULE_S: a comma list of 1 to 30 whole seconds (0 to 2 days each). */
function webhookSchedule(raw: string | undefined): readonly number[] {
  if (raw === undefined || raw.trim() === '') return DEFAULT_WEBHOOK_SCHEDULE;
  const parts = raw.split(',').map((p) => p.trim());
  if (parts.length > 30 || parts.some((p) => !/^\d+$/.test(p) || Number(p) > 172_800)) {
    throw new ConfigError('SVC_WEBHOOK_SCHEDULE_S', `got "${raw}"; expected 1 to 30 comma-separated whole seconds, each at most 172800 (e.g. 0,5,300)`);
  }
  return parts.map(Number);
}

function smtpUrl(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^smtps?:\/\/[^\s/]+/.test(raw)) throw new ConfigError('SVC_SMTP_URL', 'an smtp:// or smtps:// URL, e.g. smtp://user:pass@mail.example.com:587');
  return raw;
}
