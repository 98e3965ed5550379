import { describe, expect, it } from 'vitest';
import { CliError } from './exit.ts';
import { formatUsd, parseCapAmount } from './amount.ts';

describe('spend-cap amounts', () => {
  it.each([
    ['10', 1000],
    ['10.5', 1050],
    ['10.50', 1050],
    ['$10', 1000],
    ['1,000', 100_000],
    ['$1,000.05', 100_005],
    ['0', 0],
    [' 7.1 ', 710],
  ])('reads %s as %i cents', (text, cents) => {
    expect(parseCapAmount(text)).toEqual({ kind: 'cents', cents });
  });

  it.each(['default', 'NONE', 'Clear'])('reads %s as the system default', (text) => {
    expect(parseCapAmount(text)).toEqual({ kind: 'default' });
  });

  it.each([
    ['-5', /negative/],
    ['$-5', /negative/],
    ['10.505', /more than two decimal places/],
    ['1,00', /not an amount/],
    ['ten', /not an amount/],
    ['10.', /not an amount/],
    ['', /empty/],
    ['20,000,000', /largest cap/],
  ])('refuses %s as a usage error', (text, message) => {
    let caught: unknown;
    try {
      parseCapAmount(text);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(CliError);
    expect((caught as CliError).code).toBe(2);
    expect((caught as CliError).message).toMatch(message);
  });

  it('formats cents as dollars with separators', () => {
    expect(formatUsd(123_456_78)).toBe('$123,456.78');
    expect(formatUsd(5)).toBe('$0.05');
    expect(formatUsd(null)).toBe('none');
  });
});
