import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Where a tenant's webhook may point. Webhooks are called by the conductor, inside the operator's network, on a URL a
 * tenant chose: unless the operator allows it (SVC_NOTIFY_PRIVATE_WEBHOOKS, on by default only in dev), a URL naming
 * or resolving to a loopback, private, link-local (cloud metadata) or otherwise internal address is refused: at PUT
 * when the host is such an address literally, at delivery when its name resolves to one. (A name that changes its
 * answer between the check and the call is not caught; an egress proxy is the complete answer.)
 */
const INTERNAL = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  INTERNAL.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  INTERNAL.addSubnet(net, prefix, 'ipv6');

export function isInternalAddress(ip: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return INTERNAL.check(mapped[1], 'ipv4');
  const family = isIP(ip);
  return family === 4 ? INTERNAL.check(ip, 'ipv4') : family === 6 ? INTERNAL.check(ip, 'ipv6') : false;
}

const hostOf = (url: string) => new URL(url).hostname.replace(/^\[|\]$/g, '');

/**
 * The problem with a URL as written (an internal address or `localhost`), or undefined. `what` names what the URL is
 * for (webhooks here; tenants' MCP servers, runs/mcp-address.ts, use the same rule).
 */
export function literalProblem(url: string, what = 'webhooks'): string | undefined {
  const host = hostOf(url).toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost') || isInternalAddress(host)) return `${host} is an internal address; ${what} go to public addresses`;
  return undefined;
}

type Resolve = (host: string) => Promise<Array<{ address: string }>>;
const resolveAll: Resolve = (host) => lookup(host, { all: true });

/** Before a call: the problem when the URL's host resolves to an internal address, or undefined. */
export async function resolvedProblem(url: string, resolve: Resolve = resolveAll, what = 'webhooks'): Promise<string | undefined> {
  const literal = literalProblem(url, what);
  if (literal) return literal;
  const host = hostOf(url);
  if (isIP(host)) return undefined;
  const addresses = await resolve(host);
  const internal = addresses.find((a) => isInternalAddress(a.address));
  return internal ? `${host} resolves to the internal address ${internal.address}; ${what} go to public addresses` : undefined;
}
