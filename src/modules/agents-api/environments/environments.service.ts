import type { Tx } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { found } from '../../crud/index.ts';
import type { EnvironmentStatus } from '../../../db/types.ts';
import { badRequest } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import type { ResourceDeps } from '../deps.ts';
import { readFileContent } from '../files/files.service.ts';
import { sealJson, openJson } from '../secret-box.ts';
import { decodeBase64 } from '../validation.ts';
import type { EnvironmentInput } from './environment.schema.ts';
import { applyHosted, emptySecrets, emptySpec, NETWORK_RANK, type HostedSecrets, type HostedSpec } from './hosted-spec.ts';
import { loadTemplate } from './templates.service.ts';
import { needsSetup } from './setup.ts';
import { deleteEnvironmentRow, environmentFiles, insertEnvironment, selectEnvironment, selectEnvironmentSecrets, setEnvironmentSpec, setEnvironmentStatusRow, skillVersionInfo, skillVersions, upsertEnvironmentFile } from './environments.repo.ts';
export type { EnvironmentSpec };

/**
 * Environments: created with a session (there is no standalone create route), read through
 * `GET /agents/environments/{id}`. A hosted environment here is its configuration plus a workspace kept in the
 * database (`agent_environment_files`): it is `connected` as soon as it exists and accepts files at once. Its sandbox
 * is the session's runner session on the process substrate (sandbox.ts): the workspace is copied into `/work` when
 * the session is created; packages and setup commands run before its first turn (setup.ts, `pending` until then).
 * `self_hosted` is
 * refused, as the reference service does ("coming soon").
 */
export type HostedEnvironmentFile = { type: 'file_id'; id: string; file_id: string; path: string; size_bytes: number } | { type: 'inline'; id: string; path: string; size_bytes: number };
export type HostedSkill = { type: 'skill_reference'; skill_id: string; name: string; description: string; version: string } | { type: 'inline'; name: string; description: string };
export type HostedPlugin = { type: 'inline'; name: string; description: string };

/** `AgentSession.environment` (spec §2.4). */
export type EnvironmentResource =
  | { type: 'none' }
  | {
      type: 'openai_hosted';
      id: string;
      capability_directories: string[];
      files: HostedEnvironmentFile[];
      network: HostedSpec['network'];
      packages: HostedSpec['packages'];
      plugins: HostedPlugin[];
      skills: HostedSkill[];
      /** Present when the environment was created with one (the sandbox limits of its session). */
      config?: StoredConfig;
    };

export interface EnvironmentInfo {
  id: string;
  files: HostedEnvironmentFile[];
  object: 'agent.environment';
  plugins: HostedPlugin[];
  skills: HostedSkill[];
  status: EnvironmentStatus;
  type: 'openai_hosted' | 'self_hosted';
  config?: StoredConfig;
}

/** `config` as kept: `limits` in snake_case, only the keys given. */
export type StoredConfig = { limits: Record<string, number> };

/** What an environment row's `spec` holds: the resolved public view plus inline zips kept for installation. */
interface EnvironmentSpec {
  config?: StoredConfig;
  capability_directories: string[];
  network: HostedSpec['network'];
  packages: HostedSpec['packages'];
  files: HostedEnvironmentFile[];
  plugins: HostedPlugin[];
  skills: HostedSkill[];
  sources: { plugins: Array<{ name: string; data: string }>; skills: Array<{ name: string; data: string }> };
}

const aad = (tenantId: string, id: string) => `agent_environments:${tenantId}:${id}`;

/**
 * Creates the environment of a new session from its `environment` param: the template first, inline fields over it,
 * omitted fields inherited; a network override may not widen the template's policy. `prefix` starts the `param` of
 * 400s (`environment.` from session creation); `check` sees the merged secrets first (the session's stdio MCP servers'
 * `env_vars` must name variables of its `env`).
 */
export async function createEnvironment(
  deps: ResourceDeps,
  tenantId: string,
  input: EnvironmentInput,
  opts: { sessionId?: string | null; prefix?: string; check?: (secrets: HostedSecrets) => void } = {},
): Promise<EnvironmentResource> {
  const prefix = opts.prefix ?? 'environment.';
  if (input.type === 'none') return { type: 'none' };
  if (input.type === 'self_hosted') throw badRequest(`${prefix}type: self_hosted environments are coming soon; use openai_hosted or none`);
  return withTenant(deps.db, tenantId, async (tx) => {
    const { type: _type, environment_template_id: templateId, config, ...fields } = input;
    let base = { spec: emptySpec(), secrets: emptySecrets() };
    if (templateId) {
      const template = await loadTemplate(deps, tx, tenantId, templateId);
      if (!template) throw badRequest(`${prefix}environment_template_id: No such environment template: ${templateId}`);
      base = template;
    }
    const merged = await applyHosted(tx, base, fields, prefix);
    if (templateId && NETWORK_RANK[merged.spec.network.access] > NETWORK_RANK[base.spec.network.access]) {
      throw badRequest(`${prefix}network.access: may not widen the template's network policy (${base.spec.network.access})`);
    }
    opts.check?.(merged.secrets); // before anything is written: a refusal leaves no row behind
    const id = prefixedId('env');
    const spec: EnvironmentSpec = {
      ...(config?.limits ? { config: { limits: config.limits as Record<string, number> } } : {}),
      capability_directories: merged.spec.capability_directories,
      network: merged.spec.network,
      packages: merged.spec.packages,
      files: [],
      plugins: merged.spec.plugins.map((p) => ({ type: 'inline', name: p.name, description: p.description })),
      skills: await resolveSkills(tx, merged.spec, prefix),
      sources: {
        plugins: merged.spec.plugins.map((p) => ({ name: p.name, data: p.data })),
        skills: merged.spec.skills.flatMap((s) => (s.type === 'inline' ? [{ name: s.name, data: s.data }] : [])),
      },
    };
    // an environment with packages or setup commands is set up before its first turn (setup.ts): pending until then
    const status = needsSetup(merged.spec, merged.secrets) ? 'pending' : 'connected';
    await insertEnvironment(tx, { id, tenantId, sessionId: opts.sessionId ?? null, spec, sealed: sealJson(deps.box, merged.secrets, aad(tenantId, id)), status });
    for (const [i, f] of merged.spec.files.entries()) {
      const content = f.type === 'inline' ? decodeBase64(f.data) : (await readFileContent(tx, f.file_id))?.content;
      if (!content) throw badRequest(`${prefix}files.${i}.file_id: No such File object: ${(f as { file_id: string }).file_id}`);
      await writeFile(tx, tenantId, id, f.path, content, f.type === 'file_id' ? f.file_id : null);
      const fileId = prefixedId('envfile');
      spec.files.push(f.type === 'file_id' ? { type: 'file_id', id: fileId, file_id: f.file_id, path: f.path, size_bytes: content.byteLength } : { type: 'inline', id: fileId, path: f.path, size_bytes: content.byteLength });
    }
    await setEnvironmentSpec(tx, id, spec);
    return toResource(id, spec);
  });
}

/**
 * The network access of the environment `input` will create (undefined for none): its own `network`, else its
 * template's, else `enabled`. Known before the environment exists, because its session's profile carries it (the
 * profile is made first); createEnvironment refuses what is wrong with it (a widening override, a missing template).
 */
export async function networkAccessOf(deps: ResourceDeps, tenantId: string, input: EnvironmentInput): Promise<HostedSpec['network']['access'] | undefined> {
  if (input.type !== 'openai_hosted') return undefined;
  if (input.network !== undefined) return input.network?.access ?? 'enabled';
  const templateId = input.environment_template_id;
  if (!templateId) return emptySpec().network.access;
  const template = await withTenant(deps.db, tenantId, (tx) => loadTemplate(deps, tx, tenantId, templateId));
  return template?.spec.network.access ?? emptySpec().network.access;
}

async function resolveSkills(tx: Tx, spec: HostedSpec, prefix: string): Promise<HostedSkill[]> {
  const out: HostedSkill[] = [];
  for (const [i, s] of spec.skills.entries()) {
    if (s.type === 'inline') {
      out.push({ type: 'inline', name: s.name, description: s.description });
      continue;
    }
    const skill = await skillVersions(tx, s.skill_id);
    const version = !skill ? undefined : s.version === null ? skill.default_version : s.version === 'latest' ? skill.latest_version : Number(s.version);
    const row = version === undefined ? undefined : await skillVersionInfo(tx, s.skill_id, version);
    if (!row) throw badRequest(`${prefix}skills.${i}.skill_id: No such skill version: ${s.skill_id}${s.version ? ` version ${s.version}` : ''}`);
    out.push({ type: 'skill_reference', skill_id: s.skill_id, name: row.name, description: row.description, version: String(row.version) });
  }
  return out;
}

export async function writeFile(tx: Tx, tenantId: string, environmentId: string, path: string, content: Uint8Array, fileId: string | null): Promise<void> {
  await upsertEnvironmentFile(tx, { tenantId, environmentId, path, content, fileId });
}

function toResource(id: string, spec: EnvironmentSpec): EnvironmentResource {
  const { capability_directories, files, network, packages, plugins, skills, config } = spec;
  return { type: 'openai_hosted', id, capability_directories, files, network, packages, plugins, skills, ...(config ? { config } : {}) };
}

type EnvRow = { id: string; type: 'openai_hosted' | 'self_hosted'; status: EnvironmentStatus; workspace_directory: string; spec: Record<string, unknown> };

export async function findEnvironment(tx: Tx, id: string): Promise<EnvRow> {
  return found(await selectEnvironment(tx, id), `No such environment: ${id}`);
}

export async function getEnvironmentInfo(deps: ResourceDeps, tenantId: string, id: string): Promise<EnvironmentInfo> {
  const row = await withTenant(deps.db, tenantId, (tx) => findEnvironment(tx, id));
  const spec = row.spec as unknown as EnvironmentSpec;
  return { id: row.id, files: spec.files, object: 'agent.environment', plugins: spec.plugins, skills: spec.skills, status: row.status, type: row.type, ...(spec.config ? { config: spec.config } : {}) };
}

/** `AgentSession.environment` of an existing environment (the sessions routes render it from here). */
export async function getEnvironmentResource(deps: ResourceDeps, tenantId: string, id: string): Promise<EnvironmentResource> {
  const row = await withTenant(deps.db, tenantId, (tx) => findEnvironment(tx, id));
  return toResource(row.id, row.spec as unknown as EnvironmentSpec);
}

/** For the sandbox wiring: status changes (`disconnected`, `expired`, `failed`, …). */
export async function setEnvironmentStatus(deps: ResourceDeps, tenantId: string, id: string, status: EnvironmentStatus): Promise<void> {
  await withTenant(deps.db, tenantId, (tx) => setEnvironmentStatusRow(tx, id, status));
}

/** For the sandbox wiring: the workspace files, the secrets (`env`, `setup_commands`) and inline plugin/skill zips. */
export async function readWorkspace(deps: ResourceDeps, tenantId: string, id: string) {
  return withTenant(deps.db, tenantId, async (tx) => {
    const row = found(await selectEnvironmentSecrets(tx, id), `No such environment: ${id}`);
    const files = await environmentFiles(tx, id);
    const secrets = row.sealed ? openJson<HostedSecrets>(deps.box, row.sealed, aad(tenantId, id)) : emptySecrets();
    return { workspaceDirectory: row.workspace_directory, files, secrets, sources: (row.spec as unknown as EnvironmentSpec).sources };
  });
}

/** For the turns of a hosted environment (setup.ts): its status, packages and secrets, without the workspace bytes. */
export async function readEnvironmentSetup(deps: ResourceDeps, tenantId: string, id: string) {
  return withTenant(deps.db, tenantId, async (tx) => {
    const row = found(await selectEnvironmentSecrets(tx, id), `No such environment: ${id}`);
    const secrets = row.sealed ? openJson<HostedSecrets>(deps.box, row.sealed, aad(tenantId, id)) : emptySecrets();
    return { spec: row.spec as unknown as EnvironmentSpec, secrets, status: row.status, mark: row.sandbox_mark, workspaceDirectory: row.workspace_directory };
  });
}

/** When its session is deleted: the environment and its workspace files go (Files objects it copied from stay). */
export async function deleteEnvironment(deps: ResourceDeps, tenantId: string, id: string): Promise<void> {
  await withTenant(deps.db, tenantId, (tx) => deleteEnvironmentRow(tx, id));
}
