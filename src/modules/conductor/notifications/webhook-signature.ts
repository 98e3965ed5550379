import { createHmac } from 'node:crypto';

/**
 * Standard Webhooks signing (standardwebhooks.com): `webhook-signature: v1,<base64 HMAC-SHA256>` over
 * `<webhook-id>.<webhook-timestamp>.<body>`, keyed by the base64 bytes after `whsec_`. It is these few lines of
 * node:crypto rather than the `standardwebhooks` package (whose signer is the same HMAC and which would bring a
 * base64 dependency to the server); the flow test verifies our deliveries with that package, the reference.
 */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): Record<string, string> {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': `v1,${signature}` };
}
