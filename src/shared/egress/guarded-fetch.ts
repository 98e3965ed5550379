import { lookup as systemLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import type { buildConnector as BuildConnector, Dispatcher } from 'undici';
import { AddressRefused, checkUrl, hostProblem, POLICY_NOTE, refusedAddress, type PrivateAddresses } from './address-policy.ts';

/**
 * The one way the server calls a URL a tenant supplied. With `deny`, every connection (the first, a redirect's, a
 * kept-alive pool's next one) is checked where it is made: an IP host is judged as is, a name is resolved once and
 * every address it resolves to is judged, and the socket connects to those checked addresses only (undici's
 * connector with a checking `lookup`), so a name that answers differently between a check and the connection
 * (DNS rebinding) gains nothing. With `allow` it is a plain fetch (dev, where receivers run on the same machine).
 */

/** Resolves a name to all its addresses (the system resolver by default; tests pass a stand-in). */
export type Resolve = (host: string) => Promise<ReadonlyArray<{ address: string; family: number }>>;

const systemResolve: Resolve = (host) => systemLookup(host, { all: true });

export interface GuardOptions {
  privateAddresses: PrivateAddresses;
  /** How names are resolved; default the system resolver (what Node's own connections use). */
  resolve?: Resolve;
  /** undici's wait for response headers and between body chunks (default 5 minutes each). */
  headersTimeout?: number;
  bodyTimeout?: number;
  /** The wait for a connection (default 10 s). */
  connectTimeout?: number;
}

/** A fetch for tenant-supplied URLs: takes a URL (not a Request), throws AddressRefused when the policy refuses. */
export type GuardedFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** A `lookup` for net/tls.connect that answers only with addresses the policy allows, and fails naming the first it refuses. */
function checkedLookup(resolve: Resolve): LookupFunction {
  return ((hostname: string, options: { family?: number | string; all?: boolean }, callback: (err: Error | null, address?: unknown, family?: number) => void) => {
    const named = hostProblem(hostname);
    if (named) return callback(new AddressRefused(named));
    resolve(hostname).then(
      (all) => {
        const refused = all.find((a) => refusedAddress(a.address));
        if (refused) return callback(new AddressRefused(`${hostname} resolves to ${refused.address}, ${refusedAddress(refused.address)}; ${POLICY_NOTE}`));
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family) || 0;
        const usable = family ? all.filter((a) => a.family === family) : all;
        if (!usable.length) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname }));
        if (options.all) callback(null, usable.map((a) => ({ address: a.address, family: a.family })));
        else callback(null, usable[0].address, usable[0].family);
      },
      (err: Error) => callback(err),
    );
  }) as unknown as LookupFunction;
}

/** undici, imported with the first guarded call: a server that never calls a tenant's URL does not load it at boot. */
type Undici = typeof import('undici');
let undici: Promise<Undici> | undefined;
const loadUndici = () => (undici ??= import('undici'));

/** An undici dispatcher that enforces the policy on every connection it opens (see above). */
function guardedDispatcher({ Agent, buildConnector }: Undici, opts: GuardOptions): Dispatcher {
  const timeouts = { headersTimeout: opts.headersTimeout, bodyTimeout: opts.bodyTimeout };
  if (opts.privateAddresses === 'allow') return new Agent({ ...timeouts, connect: { timeout: opts.connectTimeout } });
  const connectChecked = buildConnector({ timeout: opts.connectTimeout, lookup: checkedLookup(opts.resolve ?? systemResolve) });
  const connect: BuildConnector.connector = (o, callback) => {
    // an IP host is never looked up (net.connect skips lookup for it): judged here
    const literal = isIP(o.hostname) ? hostProblem(o.hostname) : undefined;
    if (literal) return callback(new AddressRefused(literal), null);
    connectChecked(o, callback);
  };
  return new Agent({ ...timeouts, connect });
}

/** fetch's "fetch failed" TypeError hides the refusal in `cause`: the refusal is the error callers should see. */
function unwrap(err: unknown): unknown {
  return err instanceof TypeError && err.cause instanceof AddressRefused ? err.cause : err;
}

/**
 * A fetch for URLs tenants supply, under `opts.privateAddresses` (webhooks, MCP servers, JWKS documents): it takes a
 * URL and an init as fetch does, and rejects with AddressRefused itself when the policy refuses a connection. Holds
 * one connection pool: build it once per use and keep it.
 */
export function createGuardedFetch(opts: GuardOptions): GuardedFetch {
  let ready: Promise<{ fetch: Undici['fetch']; dispatcher: Dispatcher }> | undefined;
  return async (url, init) => {
    const { fetch, dispatcher } = await (ready ??= loadUndici().then((u) => ({ fetch: u.fetch, dispatcher: guardedDispatcher(u, opts) })));
    // a global Headers is not undici's own class: its entries are
    const headers = init?.headers instanceof Headers ? [...init.headers] : init?.headers;
    try {
      return (await fetch(url, { ...(init as object), headers, dispatcher } as never)) as unknown as Response;
    } catch (err) {
      throw unwrap(err);
    }
  };
}

const shared = new Map<PrivateAddresses, GuardedFetch>();

/** `fetch(url, init)` under `policy`, over a connection pool shared per policy (for one-off calls). */
export function guardedFetch(url: string | URL, init: RequestInit | undefined, policy: PrivateAddresses): Promise<Response> {
  let f = shared.get(policy);
  if (!f) shared.set(policy, (f = createGuardedFetch({ privateAddresses: policy })));
  return f(url, init);
}

/**
 * Before work starts (a run, a turn): why `url` is refused under `policy` by what its host resolves to now, or
 * undefined. A clear early 400; the connection is still checked when it is made, since a name may answer otherwise then.
 */
export async function resolvedProblem(url: string, policy: PrivateAddresses, resolve: Resolve = systemResolve): Promise<string | undefined> {
  const written = checkUrl(url, policy);
  if (written || policy === 'allow') return written;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return undefined;
  let all;
  try {
    all = await resolve(host);
  } catch (err) {
    return `${host} could not be resolved (${err instanceof Error ? err.message : String(err)})`;
  }
  const refused = all.find((a) => refusedAddress(a.address));
  return refused ? `${host} resolves to ${refused.address}, ${refusedAddress(refused.address)}; ${POLICY_NOTE}` : undefined;
}
