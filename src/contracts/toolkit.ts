import * as v from 'valibot';

/**
 * The platform toolkit's shared vocabulary (seed 000, Profile `tools` and `fs`): tool names, capability bundles and the
 * profile filesystem policy. The runner resolves a profile's tool selectors with these; the conductor serves the
 * bundles at `GET /api/capability-bundles` and may validate profile `fs` with `ProfileFsPolicy`.
 */
export const TOOL_NAMES = ['fs_read', 'fs_write', 'fs_edit', 'fs_list', 'fs_search', 'run_command', 'delegate', 'notify', 'automation_memory', 'memory', 'memory_search'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/**
 * The memory tools come with the memory stores a profile mounts (`memoryStores`), whatever its `tools` say: a profile
 * that mounts none has no memory to use, and one that mounts some always may (read-only mounts refuse the writes).
 * So no bundle selects them, `@all` neither.
 */
export const MEMORY_TOOLS: readonly ToolName[] = ['memory', 'memory_search'];

export interface CapabilityBundle {
  /** The selector as written in profile `tools`. */
  value: `@${string}`;
  label: string;
  description: string;
  tools: ToolName[];
}

const FILES: ToolName[] = ['fs_read', 'fs_write', 'fs_edit', 'fs_list', 'fs_search'];

/**
 * `@default` is what an empty `tools` list means. It holds the file tools only: they act inside the session's VirtualFS
 * and nothing else. `run_command` is opt-in (`@exec`): it runs arbitrary programs, contained by the runner's sandbox
 * (bubblewrap; the session's VirtualFS mounts only) but still spending CPU and, with `network: "enabled"`, reaching
 * the network; `delegate` spends money on other runs and `notify` reaches people outside, so each is opt-in too, as is
 * `automation_memory` (rewrites the note of the automation whose firing the run is; no bundle but `@all`).
 */
export const CAPABILITY_BUNDLES: readonly CapabilityBundle[] = [
  { value: '@default', label: 'Default (safe)', description: 'What an empty tools list means: read, write, edit, list and search files in the session VirtualFS.', tools: FILES },
  { value: '@files', label: 'Files', description: 'Read, write, edit, list and search files in /work, /home and the pool area.', tools: FILES },
  { value: '@files-read', label: 'Files (read only)', description: 'Read, list and search files; no writes.', tools: ['fs_read', 'fs_list', 'fs_search'] },
  { value: '@exec', label: 'Run commands', description: 'Run a command in a sandbox that sees only the session VirtualFS (timeout, output cap, minimal environment, no network unless the profile enables it).', tools: ['run_command'] },
  { value: '@delegate', label: 'Delegate', description: 'Hand a subtask to another profile of the same pool and wait for its result.', tools: ['delegate'] },
  { value: '@notify', label: 'Notify', description: 'Ask the platform to send a notification (stored and queued for delivery).', tools: ['notify'] },
  { value: '@all', label: 'Everything', description: 'Every platform tool (the memory tools come with the memory stores a profile mounts).', tools: TOOL_NAMES.filter((t) => !MEMORY_TOOLS.includes(t)) },
];

/**
 * The tool names a profile's `tools` selectors name: empty means `@default`; unknown names and bundles select nothing.
 * With `memory` (the profile mounts memory stores) the memory tools are added; without, they are never selected.
 */
export function selectTools(selectors: readonly string[] | undefined, memory = false): Set<ToolName> {
  const list = selectors?.length ? selectors : ['@default'];
  const out = new Set<ToolName>();
  for (const s of list) {
    if (s.startsWith('@')) CAPABILITY_BUNDLES.find((b) => b.value === s)?.tools.forEach((t) => out.add(t));
    else if ((TOOL_NAMES as readonly string[]).includes(s) && !MEMORY_TOOLS.includes(s as ToolName)) out.add(s as ToolName);
  }
  if (memory) for (const t of MEMORY_TOOLS) out.add(t);
  return out;
}

/** The three VirtualFS mounts: the profile home (persistent per tenant and profile), session scratch, pool areas. */
export const VFS_MOUNTS = ['/home', '/work', '/pool'] as const;
export type VfsMount = (typeof VFS_MOUNTS)[number];

/**
 * Profile `fs`: `allowedMounts` limits which mounts the profile sees (absent: all three); `readOnly` lists glob
 * patterns of virtual paths the profile may read but not write (`/home/**`, `/work/inputs`). A pattern also covers
 * everything below the paths it matches. Unknown keys are refused so a typo cannot silently widen access.
 */
export const ProfileFsPolicy = v.strictObject({
  allowedMounts: v.optional(v.array(v.picklist(VFS_MOUNTS, `one of ${VFS_MOUNTS.join(', ')}`))),
  readOnly: v.optional(v.array(v.pipe(v.string(), v.minLength(1, 'non-empty patterns')))),
});
export type ProfileFsPolicy = v.InferOutput<typeof ProfileFsPolicy>;

/**
 * Profile `network`: whether the commands its agent runs (`run_command`) may use the network. `disabled` (the default)
 * gives each command a network namespace with only a loopback device; `enabled` shares the runner's network.
 */
export const PROFILE_NETWORK = ['disabled', 'enabled'] as const;
export type ProfileNetwork = (typeof PROFILE_NETWORK)[number];
