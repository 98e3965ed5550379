import { createHmac } from 'node:crypto';

/**
 * Standard Webhooks signing (standardwebhooks.com): `webhook-signature: v1,<base64 HMAC-SHA256>` over
 * `<webhook-id>.<webhook-timestamp>.<body>`, keyed by the base64 bytes after `whsec_`. Several secrets (a rotation's
 * overlap) give several signatures, space-separated, as the scheme provides; a receiver holding either verifies. It
 * is these few lines of node:crypto rather than the `standardwebhooks` package (whose signer is the same HMAC and
 * which would bring a base64 dependency to the server); the flow tests verify our deliveries with that package.
 */
export function signWebhook(secrets: string | readonly string[], id: string, timestampSeconds: number, body: string): Record<string, string> {
  const signatures = (typeof secrets === 'string' ? [secrets] : secrets).map((secret) => {
    const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
    return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
  });
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': signatures.join(' ') };
}
