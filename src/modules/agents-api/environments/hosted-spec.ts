import type { Tx } from '../../../db/index.ts';
import { readZip } from '../../../shared/archive/index.ts';
import { badRequest } from '../../../shared/errors.ts';
import { readFileContent } from '../files/files.service.ts';
import { skillNameProblem } from '../skills/index.ts';
import { decodeBase64 } from '../validation.ts';
import { WORKSPACE, type HostedInput } from './environment.schema.ts';
import { skillVersionInfo, skillVersions } from './environments.repo.ts';

/**
 * The stored form of a hosted environment's configuration (a template's, or an environment's before resolution):
 * the public fields plus inline contents kept for installation, and the secrets (`env`, `setup_commands`) kept apart
 * so they are stored sealed. `applyHosted` replaces each field present in the input, as template update and
 * session overrides both require, and checks that referenced files and skills exist in the tenant. Inline plugin and
 * skill zips are read once through the archive module (its limits, its entry rules) so that what is kept for
 * installation is known to unpack safely, and their names are skill names (never paths).
 */
export type StoredFile = { type: 'file_id'; file_id: string; path: string } | { type: 'inline'; path: string; data: string; size_bytes: number };
export type StoredSkill = { type: 'skill_reference'; skill_id: string; version: string | null } | { type: 'inline'; name: string; description: string; data: string };
export type Network = { access: 'enabled' | 'disabled' | 'restricted'; allowed_domains: string[] };

export interface HostedSpec {
  capability_directories: string[];
  network: Network;
  packages: { npm: string[]; python: string[]; system: string[] };
  files: StoredFile[];
  plugins: Array<{ type: 'inline'; name: string; description: string; data: string }>;
  skills: StoredSkill[];
}

export interface HostedSecrets {
  env: Record<string, string>;
  setup_commands: Array<{ command: string; cwd: string }>;
}

export const emptySpec = (): HostedSpec => ({
  capability_directories: [],
  network: { access: 'enabled', allowed_domains: [] },
  packages: { npm: [], python: [], system: [] },
  files: [],
  plugins: [],
  skills: [],
});

export const emptySecrets = (): HostedSecrets => ({ env: {}, setup_commands: [] });

/** Network policies from narrowest to widest; an override may not be wider than its template. */
export const NETWORK_RANK = { disabled: 0, restricted: 1, enabled: 2 } as const;

export async function applyHosted(tx: Tx, base: { spec: HostedSpec; secrets: HostedSecrets }, input: HostedInput, prefix = ''): Promise<{ spec: HostedSpec; secrets: HostedSecrets }> {
  const spec: HostedSpec = { ...base.spec };
  const secrets: HostedSecrets = { ...base.secrets };
  if (input.capability_directories !== undefined) spec.capability_directories = input.capability_directories ?? [];
  if (input.network !== undefined) {
    const network = input.network ?? { access: 'enabled' as const, allowed_domains: [] };
    if (network.access === 'restricted') throw badRequest(`${prefix}network.access: restricted network access is unavailable; use enabled or disabled`);
    // a domain list only means something to restricted access: with full access or none it would restrict nothing
    if (network.allowed_domains?.length) throw badRequest(`${prefix}network.allowed_domains: a domain list needs restricted access, which is unavailable; leave it empty (enabled: any destination, disabled: none)`);
    spec.network = { access: network.access, allowed_domains: network.allowed_domains ?? [] };
  }
  if (input.packages !== undefined) {
    const p = input.packages;
    spec.packages = { npm: p?.npm ?? [], python: p?.python ?? [], system: p?.system ?? [] };
    checkPackages(spec.packages, prefix);
  }
  if (input.files !== undefined) spec.files = await checkFiles(tx, input.files ?? [], prefix);
  if (input.plugins !== undefined) spec.plugins = await checkPlugins(input.plugins ?? [], prefix);
  if (input.skills !== undefined) spec.skills = await checkSkills(tx, input.skills ?? [], prefix);
  if (input.env !== undefined) secrets.env = input.env ?? {};
  if (input.setup_commands !== undefined) secrets.setup_commands = (input.setup_commands ?? []).map((s) => ({ command: s.command, cwd: s.cwd ?? WORKSPACE }));
  return { spec, secrets };
}

/** Package names a manager takes as names (never options): letters, digits and the usual version and scope signs. */
export const PACKAGE_NAME = /^[A-Za-z0-9@][A-Za-z0-9@._/:~^<>=!*+-]*$/;

/**
 * Packages are installed by the package managers the sandbox has (npm and pip, setup.ts); there is no system package
 * manager in it (its `/usr` is the runner's, read-only), so `system` packages are refused here, at create.
 */
function checkPackages(packages: HostedSpec['packages'], prefix: string): void {
  if (packages.system.length) throw badRequest(`${prefix}packages.system: system packages cannot be installed: the sandbox has no system package manager; use packages.npm or packages.python`);
  for (const manager of ['npm', 'python'] as const) {
    const bad = packages[manager].findIndex((name) => !PACKAGE_NAME.test(name));
    if (bad >= 0) throw badRequest(`${prefix}packages.${manager}.${bad}: not a package name: ${JSON.stringify(packages[manager][bad])}`);
  }
}

async function checkFiles(tx: Tx, files: NonNullable<HostedInput['files']>, prefix: string): Promise<StoredFile[]> {
  const seen = new Set<string>();
  const out: StoredFile[] = [];
  for (const [i, f] of files.entries()) {
    if (seen.has(f.path)) throw badRequest(`${prefix}files.${i}.path: duplicate path ${f.path}`);
    seen.add(f.path);
    if (f.type === 'inline') {
      out.push({ type: 'inline', path: f.path, data: f.data, size_bytes: decodeBase64(f.data).byteLength });
      continue;
    }
    if (!(await readFileContent(tx, f.file_id))) throw badRequest(`${prefix}files.${i}.file_id: No such File object: ${f.file_id}`);
    out.push({ type: 'file_id', file_id: f.file_id, path: f.path });
  }
  return out;
}

/** An inline zip's name and bytes, judged before it is kept (400/413 naming `<field>.name` or `<field>.source.data`). */
async function checkInlineZip(field: string, name: string, data: string): Promise<void> {
  const problem = skillNameProblem(name);
  if (problem) throw badRequest(`${field}.name: ${problem}`);
  await readZip(decodeBase64(data), { field: `${field}.source.data` });
}

async function checkPlugins(plugins: NonNullable<HostedInput['plugins']>, prefix: string): Promise<HostedSpec['plugins']> {
  const out: HostedSpec['plugins'] = [];
  for (const [i, p] of plugins.entries()) {
    await checkInlineZip(`${prefix}plugins.${i}`, p.name, p.source.data);
    out.push({ type: 'inline', name: p.name, description: p.description, data: p.source.data });
  }
  return out;
}

async function checkSkills(tx: Tx, skills: NonNullable<HostedInput['skills']>, prefix: string): Promise<StoredSkill[]> {
  const out: StoredSkill[] = [];
  for (const [i, s] of skills.entries()) {
    if (s.type === 'inline') {
      await checkInlineZip(`${prefix}skills.${i}`, s.name, s.source.data);
      out.push({ type: 'inline', name: s.name, description: s.description, data: s.source.data });
      continue;
    }
    const skill = await skillVersions(tx, s.skill_id);
    if (!skill) throw badRequest(`${prefix}skills.${i}.skill_id: No such skill: ${s.skill_id}`);
    if (s.version && s.version !== 'latest') {
      const found = await skillVersionInfo(tx, s.skill_id, Number(s.version));
      if (!found) throw badRequest(`${prefix}skills.${i}.version: skill ${s.skill_id} has no version ${s.version}`);
    }
    out.push({ type: 'skill_reference', skill_id: s.skill_id, version: s.version ?? null });
  }
  return out;
}
