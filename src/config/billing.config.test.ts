import { describe, expect, it } from 'vitest';
import { runSvc } from '../../test/support/process.ts';
import { ConfigError, loadConfig } from './config.ts';

const LIVE = { AGENT_ORC_ENV: 'live', AGENT_API_KEY_PEPPER: 'p'.repeat(16), SVC_SECRETS_KEY: 's'.repeat(16) };
const KEYS = { STRIPE_SECRET_KEY: 'sk_test_abcdefgh12345678', STRIPE_WEBHOOK_SECRET: 'whsec_abcdefgh12345678' };

function problem(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('SVC_BILLING', () => {
  it('is off by default in dev, and takes ledger or stripe', () => {
    expect(loadConfig({}).billing.mode).toBe('off');
    expect(loadConfig({ SVC_BILLING: 'ledger' }).billing.mode).toBe('ledger');
    expect(loadConfig({ SVC_BILLING: 'stripe', ...KEYS, SVC_STRIPE_API_URL: 'http://127.0.0.1:12111/' }).billing).toEqual({
      mode: 'stripe',
      lowCreditMicroUsd: 1_000_000,
      stripe: { secretKey: KEYS.STRIPE_SECRET_KEY, webhookSecret: KEYS.STRIPE_WEBHOOK_SECRET, apiUrl: 'http://127.0.0.1:12111', returnUrl: undefined },
    });
    expect(problem({ SVC_BILLING: 'free' })).toBe('SVC_BILLING: got "free"; allowed: off, ledger, stripe');
  });

  it('takes the low-credit line in micro-USD (0: never notify)', () => {
    expect(loadConfig({ SVC_LOW_CREDIT_MICRO_USD: '0' }).billing.lowCreditMicroUsd).toBe(0);
    expect(problem({ SVC_LOW_CREDIT_MICRO_USD: '$5' })).toBe('SVC_LOW_CREDIT_MICRO_USD: got "$5"; allowed: a whole number of micro-USD (0: never notify)');
  });

  it('lets stripe start without keys in dev (checkout answers 503), and outside dev names the missing variable', () => {
    expect(loadConfig({ SVC_BILLING: 'stripe' }).billing.stripe.secretKey).toBeUndefined();
    expect(problem({ ...LIVE, SVC_BILLING: 'stripe' })).toBe('STRIPE_SECRET_KEY: required when SVC_BILLING is stripe and AGENT_ORC_ENV is "live" (not dev)');
    expect(problem({ ...LIVE, SVC_BILLING: 'stripe', STRIPE_SECRET_KEY: KEYS.STRIPE_SECRET_KEY })).toMatch(/^STRIPE_WEBHOOK_SECRET: required/);
    expect(problem({ ...LIVE, SVC_BILLING: 'stripe', ...KEYS, STRIPE_SECRET_KEY: 'pk_test_publishable' })).toMatch(/^STRIPE_SECRET_KEY: a Stripe secret key/);
    expect(loadConfig({ ...LIVE, SVC_BILLING: 'stripe', ...KEYS }).billing.mode).toBe('stripe');
    // a runner-only process has no billing to do
    expect(loadConfig({ ...LIVE, SVC_BILLING: 'stripe', SVC_INTERNAL_TOKEN: 'i'.repeat(16) }, { role: 'runner' }).billing.mode).toBe('stripe');
  });

  it('outside dev, needs a billing client or the explicit choice to run without one, wherever a conductor runs', () => {
    expect(problem(LIVE)).toBe('SVC_BILLING: required when AGENT_ORC_ENV is "live" (not dev): stripe or ledger for a billing client, or off to run without billing');
    expect(problem({ ...LIVE, SVC_ROLE: 'conductor', SVC_INTERNAL_TOKEN: 'i'.repeat(16) })).toMatch(/^SVC_BILLING: required/);
    expect(loadConfig({ ...LIVE, SVC_BILLING: 'off' }).billing.mode).toBe('off');
    expect(loadConfig({ ...LIVE, SVC_BILLING: 'ledger' }).billing.mode).toBe('ledger');
    // a runner or a worker has no billing to do
    expect(loadConfig({ ...LIVE, SVC_INTERNAL_TOKEN: 'i'.repeat(16) }, { role: 'runner' }).billing.mode).toBe('off');
    expect(loadConfig(LIVE, { role: 'worker' }).billing.mode).toBe('off');
  });

  it('refuses to boot outside dev with one line naming the variable', async () => {
    const res = await runSvc(['serve'], { ...LIVE, SVC_BILLING: 'stripe' });
    expect(res.code).toBe(2);
    expect(res.stderr.trim().split('\n')).toEqual(['svc: invalid configuration: STRIPE_SECRET_KEY: required when SVC_BILLING is stripe and AGENT_ORC_ENV is "live" (not dev)']);
    const unbilled = await runSvc(['serve'], LIVE);
    expect(unbilled.code).toBe(2);
    expect(unbilled.stderr.trim().split('\n')).toEqual(['svc: invalid configuration: SVC_BILLING: required when AGENT_ORC_ENV is "live" (not dev): stripe or ledger for a billing client, or off to run without billing']);
  });
});
