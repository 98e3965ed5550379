import ipaddr from 'ipaddr.js';
import { isIP } from 'node:net';

/**
 * The address policy for URLs a tenant supplies (webhooks, MCP servers, JWKS documents, any later one): the server
 * calls them from inside the operator's network, so with `deny` (SVC_PRIVATE_ADDRESSES, the default outside dev) it
 * calls public addresses only. Refused: loopback, private, link-local (cloud metadata at 169.254.169.254), CGNAT,
 * unspecified, multicast, broadcast, reserved and documentation ranges, unique-local and site-local IPv6, the names
 * `localhost` and `*.localhost`, and every IPv6 form that embeds an IPv4 address (IPv4-mapped, IPv4-compatible,
 * IPv4-translated, NAT64, 6to4, Teredo) whose IPv4 address is refused. Ranges come from ipaddr.js; the URL parser has
 * already turned odd IPv4 spellings (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`) into dotted quads.
 *
 * This file judges addresses and URLs as written; guarded-fetch.ts applies the same judgement to every address a
 * name resolves to, when the connection is made.
 */
export const PRIVATE_ADDRESSES = ['allow', 'deny'] as const;
export type PrivateAddresses = (typeof PRIVATE_ADDRESSES)[number];

/** What a refusal says after the address, so every surface names the policy the same way. */
export const POLICY_NOTE = 'the address policy (SVC_PRIVATE_ADDRESSES=deny) allows public addresses only';

/** A connection the policy refused. `fetch` callers see it as the error itself (guarded-fetch.ts unwraps it). */
export class AddressRefused extends Error {
  readonly code = 'ERR_ADDRESS_POLICY';
  constructor(message: string) {
    super(message);
    this.name = 'AddressRefused';
  }
}

/** ipaddr.js range names, as a sentence says them. Ranges not listed here (unicast, amt, as112) are public. */
const REFUSED: Readonly<Record<string, string>> = {
  unspecified: 'an unspecified address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT address',
  private: 'a private address',
  reserved: 'a reserved address',
  uniqueLocal: 'a unique-local address',
  deprecatedSiteLocal: 'a site-local address',
  discard: 'a discard-only address',
  benchmarking: 'a benchmarking address',
  deprecatedOrchid: 'an ORCHID address',
  orchid2: 'an ORCHID address',
  droneRemoteIdProtocolEntityTags: 'a non-routable (DRIP) address',
  segmentRouting: 'a segment-routing address',
};

const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);

/** The IPv4 addresses an IPv6 address carries, with the form's name; none for a plain IPv6 address. */
function embedded(a: ipaddr.IPv6): Array<{ v4: ipaddr.IPv4; form: string }> {
  const p = a.parts;
  switch (a.range()) {
    case 'ipv4Mapped':
      return [{ v4: v4(p[6], p[7]), form: 'IPv4-mapped' }];
    case 'rfc6145':
      return [{ v4: v4(p[6], p[7]), form: 'IPv4-translated' }];
    case 'rfc6052':
      // 64:ff9b::/96 carries the IPv4 address last; the local-use 64:ff9b:1::/48 is the operator's own (refused whole)
      return a.match(NAT64_WELL_KNOWN) ? [{ v4: v4(p[6], p[7]), form: 'NAT64' }] : [];
    case '6to4':
      return [{ v4: v4(p[1], p[2]), form: '6to4' }];
    case 'teredo':
      // the server's address, and the client's, stored inverted
      return [
        { v4: v4(p[2], p[3]), form: 'Teredo' },
        { v4: v4(~p[6] & 0xffff, ~p[7] & 0xffff), form: 'Teredo' },
      ];
    default:
      // ::a.b.c.d, the deprecated IPv4-compatible form (:: and ::1 are ranges of their own)
      return p.slice(0, 6).every((x) => x === 0) && a.range() === 'unicast' ? [{ v4: v4(p[6], p[7]), form: 'IPv4-compatible' }] : [];
  }
}

/**
 * Why the policy refuses the IP address `ip` (canonical, as DNS or the URL parser gives it), e.g. `a loopback
 * address` or `127.0.0.1 (IPv4-mapped), a loopback address`; undefined for a public address or a string that is no IP
 * address.
 */
export function refusedAddress(ip: string): string | undefined {
  if (!ipaddr.isValid(ip) || !isIP(ip.replace(/%.*$/, ''))) return undefined;
  const a = ipaddr.parse(ip);
  if (a.kind() === 'ipv4') return REFUSED[(a as ipaddr.IPv4).range()];
  const six = a as ipaddr.IPv6;
  const range = six.range();
  if (range === 'rfc6052' && !six.match(NAT64_WELL_KNOWN)) return 'a local-use NAT64 address';
  for (const e of embedded(six)) {
    const why = REFUSED[e.v4.range()];
    if (why) return `${e.v4.toString()} (${e.form}), ${why}`;
  }
  return REFUSED[range];
}

/** `localhost` and its subdomains (RFC 6761: they resolve to loopback, whatever DNS says). */
function isLocalhostName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.+$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * Why the policy refuses a host as written (an IP address, bracketed or not, or a name), as a sentence naming it, or
 * undefined. A name other than `localhost` passes here: what it resolves to is checked at connect time.
 */
export function hostProblem(host: string): string | undefined {
  const bare = host.replace(/^\[|\]$/g, '');
  if (isLocalhostName(bare)) return `${bare} is a loopback name; ${POLICY_NOTE}`;
  const why = refusedAddress(bare);
  return why ? `${bare} is ${why}; ${POLICY_NOTE}` : undefined;
}

/**
 * Why a URL a tenant gave is refused under `policy`, or undefined: anything but http(s), and with `deny` a host that
 * is (or is named `localhost` for) an address the policy refuses. For a 400 when the URL is saved; a host name is
 * judged again, by what it resolves to, when the server connects (guarded-fetch.ts).
 */
export function checkUrl(url: string | URL, policy: PrivateAddresses): string | undefined {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return 'not a URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return `${parsed.protocol} URLs are not called; use http(s)`;
  return policy === 'deny' ? hostProblem(parsed.hostname) : undefined;
}
