import { describe, expect, it } from 'vitest';
import { isTenantKey, maskKey } from './mask.ts';

describe('key masking', () => {
  it('keeps the prefix and four characters at each end of the random part', () => {
    expect(maskKey('ao_test_abcdEFGHijklMNOPqrstwxyz')).toBe('ao_test_abcd…wxyz');
    expect(maskKey('ao_live_0123456789abcdefXYZW')).toBe('ao_live_0123…XYZW');
  });

  it('masks foreign tokens by their ends and short ones entirely', () => {
    expect(maskKey('eyJhbGciOiJIUzI1NiJ9.payload.sig')).toBe('eyJh….sig');
    expect(maskKey('short')).toBe('****');
    expect(maskKey(undefined)).toBeNull();
  });

  it('recognises tenant keys', () => {
    expect(isTenantKey('ao_test_abcdEFGHijklMNOPqrst')).toBe(true);
    expect(isTenantKey('sk-abc')).toBe(false);
  });
});
