import { describe, expect, it } from 'vitest';
import { comparePaths } from './environment-files.service.ts';

describe('environment file order', () => {
  it('sorts by case-sensitive path components, parents before children', () => {
    const paths = ['/w/a.ts', '/w/a-b.ts', '/w/a/b.ts', '/w/Z', '/w/a', '/w/b'];
    expect([...paths].sort(comparePaths)).toEqual(['/w/Z', '/w/a', '/w/a/b.ts', '/w/a-b.ts', '/w/a.ts', '/w/b']);
  });
});
