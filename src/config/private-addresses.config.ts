import type { PrivateAddresses } from '../shared/egress/index.ts';
import { ConfigError, pick } from './parse.ts';

/** Its older names, each once the switch of one kind of URL: read as SVC_PRIVATE_ADDRESSES when that is unset. */
const PRIVATE_ADDRESS_ALIASES = ['SVC_PRIVATE_MCP', 'SVC_NOTIFY_PRIVATE_WEBHOOKS'] as const;

/**
 * SVC_PRIVATE_ADDRESSES, or an older name of it: one policy for every kind of URL, so where several are set they must
 * agree (a webhook allowed where an MCP server is refused would be a policy nobody chose).
 */
export function privateAddressesOf(env: Record<string, string | undefined>, appEnv: string): PrivateAddresses {
  const allowed = ['allow', 'deny'] as const;
  const set = (['SVC_PRIVATE_ADDRESSES', ...PRIVATE_ADDRESS_ALIASES] as const)
    .filter((name) => env[name])
    .map((name) => ({ name, value: pick(name, env[name], allowed, 'deny') }));
  const differ = set.find((s) => s.value !== set[0].value);
  if (differ) throw new ConfigError(differ.name, `got "${differ.value}" while ${set[0].name} is "${set[0].value}"; one address policy covers every URL a tenant gives: set SVC_PRIVATE_ADDRESSES alone`);
  return set[0]?.value ?? (appEnv === 'dev' ? 'allow' : 'deny');
}
