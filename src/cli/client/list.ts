import type { Output } from './output.ts';
import { usageError } from './exit.ts';

/** The `--limit` flag of the list commands: a whole number from 1 to 1000, 20 by default. */
export function readLimit(raw: string | undefined, fallback = 20): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw usageError(`--limit: expected a whole number from 1 to 1000, got "${raw}"`);
  return n;
}

/** Prints a list: the array with --json, else one tab-separated row per item (under `header` in a terminal). */
export function printList<T>(out: Output, items: T[], row: (item: T) => Array<string | number | boolean | null | undefined>, header?: string[]): void {
  if (out.json) return out.data(items);
  out.rows(items.map(row), header);
}
