import { describe, expect, it } from 'vitest';
import { firstBootMessage } from './bootstrap.ts';

describe('the first boot message', () => {
  it('shows the key once, where it was written, and how to let it manage tenants', () => {
    const text = firstBootMessage('ao_test_abcdefghijklmnop', '/srv/.svc/bootstrap-key', undefined);
    expect(text).toContain('Owner key of tenant "default" (shown once): ao_test_abcdefghijklmnop');
    expect(text).toContain('Written to /srv/.svc/bootstrap-key (mode 0600).');
    expect(text).toContain('restart svc with\n     AGENT_ORC_ADMIN_TENANT=default');
  });

  it('says the key manages tenants already when tenant default is the operator tenant, and names no file it did not write', () => {
    const text = firstBootMessage('ao_test_abcdefghijklmnop', undefined, 'default');
    expect(text).toContain('this key can create tenants and their keys (/api/tenants)');
    expect(text).not.toContain('restart');
    expect(text).not.toContain('Written to');
  });
});
