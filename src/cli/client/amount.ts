import { usageError } from './exit.ts';

/**
 * Spend-cap amounts as people type them: `10`, `10.5`, `10.50`, `$10`, `1,000`, `$1,000.50`. At most two decimals,
 * never negative, at most $10,000,000; `default`, `none` or `clear` (any case) revert to the system default. Parsed
 * in integer cents from the text, so no floating-point rounding is involved.
 */
export const MAX_CAP_CENTS = 1_000_000_000;

export type CapAmount = { kind: 'default' } | { kind: 'cents'; cents: number };

export function parseCapAmount(input: string): CapAmount {
  const raw = input.trim();
  if (/^(default|none|clear)$/i.test(raw)) return { kind: 'default' };
  if (raw === '') throw usageError('amount: empty; give dollars like 10, 10.50, $1,000, or "default"');
  if (/^-|^\$-/.test(raw)) throw usageError(`amount: ${raw} is negative; a spend cap cannot be negative`);
  const m = /^\$?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?$/.exec(raw);
  if (!m) {
    if (/^\$?[\d,]*\.\d{3,}$/.test(raw)) throw usageError(`amount: ${raw} has more than two decimal places`);
    throw usageError(`amount: "${raw}" is not an amount; use dollars like 10, 10.5, 10.50, $10 or 1,000 (at most two decimals), or "default"`);
  }
  const dollars = m[1].replace(/,/g, '');
  const cents = Number(dollars) * 100 + Number((m[2] ?? '').padEnd(2, '0') || '0');
  if (!Number.isSafeInteger(cents) || cents > MAX_CAP_CENTS) throw usageError(`amount: ${raw} is above the largest cap ($10,000,000)`);
  return { kind: 'cents', cents };
}

/** `$1,234.56` from cents. */
export function formatUsd(cents: number | null | undefined): string {
  if (cents === null || cents === undefined) return 'none';
  const negative = cents < 0;
  const [whole, frac] = (Math.abs(cents) / 100).toFixed(2).split('.');
  return `${negative ? '-' : ''}$${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${frac}`;
}
