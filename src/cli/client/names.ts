import { notFoundError } from './exit.ts';
import type { Api } from './http.ts';

/**
 * Where a command takes an id, a person types the name they gave: `svc automations run nightly` as well as
 * `svc automations run aut_…`. An argument of the id's form (`<prefix>_` and 16 letters or digits) is used as it is;
 * anything else is looked up by name through the list the API already serves.
 */
const enc = encodeURIComponent;
const isId = (prefix: string, ref: string) => new RegExp(`^${prefix}_[a-z0-9]{16}$`).test(ref);

interface Named {
  id: string;
  name: string | null;
}

/** An automation (`aut_…`) by id or by name (names are unique within a tenant). */
export async function automationId(api: Api, ref: string): Promise<string> {
  if (isId('aut', ref)) return ref;
  const found = (await api.get<Named[]>(`/api/automations?q=${enc(ref)}&limit=1000`)).find((a) => a.name === ref);
  if (!found) throw notFoundError(`no automation named ${ref} (list them with \`svc automations list\`)`);
  return found.id;
}

/** A workflow run (`wfr_…`) by id, or by name: the newest run of that name. */
export async function workflowRunId(api: Api, ref: string): Promise<string> {
  if (isId('wfr', ref)) return ref;
  const found = (await api.get<Named[]>(`/api/workflows/runs?name=${enc(ref)}&limit=1`)).find((w) => w.name === ref);
  if (!found) throw notFoundError(`no workflow run named ${ref} (list them with \`svc workflows list\`)`);
  return found.id;
}

/** A saved workflow definition (`wfd_…`) by id or by name. */
export async function workflowDefinitionId(api: Api, ref: string): Promise<string> {
  if (isId('wfd', ref)) return ref;
  const found = (await api.get<Named[]>('/api/workflows/definitions')).find((d) => d.name === ref);
  if (!found) throw notFoundError(`no workflow definition named ${ref} (list them with \`svc get workflows\`)`);
  return found.id;
}

/** A published agent's key (`akey_…`) by id or by its label (the active key of that label). */
export async function agentKeyId(api: Api, profile: string, ref: string): Promise<string> {
  if (isId('akey', ref)) return ref;
  const keys = await api.get<Array<{ id: string; label: string; status: string }>>(`/api/profiles/${enc(profile)}/keys`);
  const found = keys.filter((k) => k.label === ref && k.status === 'active');
  if (found.length !== 1) throw notFoundError(`${found.length ? 'several active keys' : 'no active key'} labelled ${ref} (list them with \`svc agent-keys list ${profile}\`; an id names one)`);
  return found[0]!.id;
}
