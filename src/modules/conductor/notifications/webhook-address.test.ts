import { describe, expect, it } from 'vitest';
import { isInternalAddress, literalProblem, resolvedProblem } from './webhook-address.ts';

describe('webhook addresses', () => {
  it('knows loopback, private, link-local and mapped addresses from public ones', () => {
    for (const ip of ['127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1']) {
      expect(isInternalAddress(ip), ip).toBe(true);
    }
    for (const ip of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(isInternalAddress(ip), ip).toBe(false);
  });

  it('refuses internal hosts written in the URL, and names that resolve to one', async () => {
    expect(literalProblem('http://169.254.169.254/latest/meta-data')).toBe('169.254.169.254 is an internal address; webhooks go to public addresses');
    expect(literalProblem('http://[::1]:8080/x')).toMatch(/^::1 is an internal address/);
    expect(literalProblem('http://localhost:3000/')).toMatch(/^localhost is an internal address/);
    expect(literalProblem('https://hooks.example.com/x')).toBeUndefined();
    // a name is resolved before the call (here by a stand-in for the system resolver)
    const dns = async (host: string) => (host === 'inside.example' ? [{ address: '203.0.113.7' }, { address: '10.0.0.5' }] : [{ address: '203.0.113.8' }]);
    expect(await resolvedProblem('http://inside.example/x', dns)).toBe('inside.example resolves to the internal address 10.0.0.5; webhooks go to public addresses');
    expect(await resolvedProblem('http://outside.example/x', dns)).toBeUndefined();
    expect(await resolvedProblem('http://127.0.0.1:9/x', dns)).toMatch(/^127\.0\.0\.1 is an internal address/);
  });
});
