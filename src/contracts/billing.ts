/**
 * Billing wire shapes of `/api/spend-cap`, shared by the conductor's billing routes and the CLI's `svc billing cap`.
 */
export interface CapWindow {
  limit_usd_cents: number | null;
  limit_usd: number | null;
  spent_usd_cents: number;
  spent_usd: number;
  remaining_usd_cents: number | null;
  user_set: boolean;
  resets_at: string;
}

export interface SpendCap {
  enabled: boolean;
  month: CapWindow;
  day: CapWindow;
  billing_email: string | null;
}
