import { z } from 'zod';
import type { MemoryEntry } from '../../../contracts/memory.ts';
import { defineTool } from './tool.ts';
import { ToolFailure } from './tool-failure.ts';
import { call, display, listingText, memoryOf, missing, numbered, parsePath, requireFile, ROOT, rootText, seenKey, type Memory } from './memory-view.ts';

/**
 * `memory`: the agent's memory as a directory of text files under `/memories`, one folder per memory store its profile
 * mounts, with the commands of Anthropic's memory tool (view, create, str_replace, insert, delete, rename). Files live
 * in the conductor's database (never on the runner), in the run's own end user's part of a per_user store.
 *
 * Edits are optimistic: str_replace and insert apply to the version they read, and to the version this session last
 * saw when it viewed or wrote the file before; if another session wrote the file in between, the edit is refused with a
 * conflict the model can read, and it views the file again and retries. No update is ever lost.
 */
const COMMANDS = ['view', 'create', 'str_replace', 'insert', 'delete', 'rename'] as const;

const Input = z.object({
  command: z.enum(COMMANDS),
  path: z.string().optional().describe('view, create, str_replace, insert, delete: a path under /memories'),
  view_range: z.array(z.number().int()).length(2).optional().describe('view: [first line, last line] (1-based; -1 for the end)'),
  file_text: z.string().optional().describe('create: the new file\'s content'),
  old_str: z.string().optional().describe('str_replace: the exact text to replace; it must occur exactly once'),
  new_str: z.string().optional().describe('str_replace: what replaces it'),
  insert_line: z.number().int().min(0).optional().describe('insert: the line after which to insert (0: at the top)'),
  insert_text: z.string().optional().describe('insert: the text to insert'),
  old_path: z.string().optional().describe('rename: the file or folder to move'),
  new_path: z.string().optional().describe('rename: where to move it (same store)'),
});
type Input = z.output<typeof Input>;

/**
 * What the model reads: plain text, as the memory tool answers (an object would reach Claude Code as its JSON, since it
 * prefers an MCP result's structured content to its text).
 */
type MemoryResult = string;

const need = <T>(value: T | undefined, what: string, command: string): T => {
  if (value === undefined) throw new ToolFailure(`${command} needs ${what}`);
  return value;
};

async function current(m: Memory, raw: string, w: { store: string; path: string }): Promise<MemoryEntry> {
  const entry = await call(() => m.client.read(m.token, w.store, w.path, m.signal));
  if (!entry) throw missing(raw);
  const saw = m.seen.get(seenKey(w.store, w.path));
  if (saw !== undefined && saw !== entry.version) {
    m.seen.delete(seenKey(w.store, w.path));
    throw new ToolFailure(
      `Conflict: ${raw} changed since you last saw it (you saw version ${saw}; another session has written version ${entry.version}). Nothing was changed. View the file again and retry your edit on what it holds now.`,
      { conflict: true, yourVersion: saw, currentVersion: entry.version },
    );
  }
  return entry;
}

/** Saves `content` over `entry`, only if it is still the version read (else the other writer's change would be lost). */
async function save(m: Memory, raw: string, w: { store: string; path: string }, entry: MemoryEntry, content: string): Promise<MemoryEntry> {
  try {
    const saved = await call(() => m.client.write(m.token, w.store, w.path, { content, expectedVersion: entry.version }, m.signal));
    m.seen.set(seenKey(w.store, w.path), saved.version);
    return saved;
  } catch (err) {
    if (err instanceof ToolFailure && err.details.status === 409) {
      m.seen.delete(seenKey(w.store, w.path));
      throw new ToolFailure(`Conflict: ${raw} was changed by another session while you edited it (you edited version ${entry.version}). Nothing was changed. View the file again and retry your edit.`, { conflict: true, yourVersion: entry.version });
    }
    throw err;
  }
}

const COMMAND_RUNNERS: Record<Input['command'], (m: Memory, i: Input) => Promise<MemoryResult>> = {
  async view(m, i) {
    const raw = need(i.path, 'path', 'view');
    const w = parsePath(raw);
    if (!w.store) return rootText(await call(() => m.client.mounts(m.token, m.signal)));
    if (w.path !== '/') {
      const entry = await call(() => m.client.read(m.token, w.store!, w.path, m.signal));
      if (entry) {
        m.seen.set(seenKey(w.store, w.path), entry.version);
        const [from, to] = i.view_range ?? [1, -1];
        return `Here's the content of ${display(w.store, w.path)} with line numbers (version ${entry.version}):\n${numbered(entry.content, from, to)}`;
      }
    }
    const entries = await call(() => m.client.list(m.token, w.store!, w.path === '/' ? '/' : `${w.path}/`, m.signal));
    if (entries.length === 0 && w.path !== '/') throw missing(raw);
    return listingText(w.store, w.path, entries);
  },

  async create(m, i) {
    const raw = need(i.path, 'path', 'create');
    const w = parsePath(raw);
    requireFile(w, raw);
    try {
      const saved = await call(() => m.client.write(m.token, w.store, w.path, { content: need(i.file_text, 'file_text', 'create'), expectedVersion: 0 }, m.signal));
      m.seen.set(seenKey(w.store, w.path), saved.version);
      return `File created successfully at: ${display(w.store, w.path)}`;
    } catch (err) {
      if (err instanceof ToolFailure && err.details.status === 409) throw new ToolFailure(`Error: File ${display(w.store, w.path)} already exists. Use str_replace or insert to change it, or delete it first.`);
      throw err;
    }
  },

  async str_replace(m, i) {
    const raw = need(i.path, 'path', 'str_replace');
    const w = parsePath(raw);
    requireFile(w, raw);
    const oldStr = need(i.old_str, 'old_str', 'str_replace');
    if (oldStr === '') throw new ToolFailure('str_replace needs a non-empty old_str');
    const entry = await current(m, raw, w);
    const at: number[] = [];
    for (let k = entry.content.indexOf(oldStr); k >= 0; k = entry.content.indexOf(oldStr, k + 1)) at.push(k);
    if (at.length === 0) throw new ToolFailure(`No replacement was performed, old_str \`${oldStr}\` did not appear verbatim in ${display(w.store, w.path)}.`);
    if (at.length > 1) {
      const lines = at.map((k) => entry.content.slice(0, k).split('\n').length);
      throw new ToolFailure(`No replacement was performed. Multiple occurrences of old_str \`${oldStr}\` in lines: ${lines.join(', ')}. Please ensure it is unique`);
    }
    const content = entry.content.slice(0, at[0]) + (i.new_str ?? '') + entry.content.slice(at[0] + oldStr.length);
    const saved = await save(m, raw, w, entry, content);
    const line = content.slice(0, at[0]).split('\n').length;
    return `The memory file has been edited (version ${saved.version}). Here's a snippet of ${display(w.store, w.path)}:\n${numbered(content, line - 2, line + 2 + (i.new_str ?? '').split('\n').length)}`;
  },

  async insert(m, i) {
    const raw = need(i.path, 'path', 'insert');
    const w = parsePath(raw);
    requireFile(w, raw);
    const line = need(i.insert_line, 'insert_line', 'insert');
    const text = need(i.insert_text, 'insert_text', 'insert');
    const entry = await current(m, raw, w);
    const lines = entry.content.split('\n');
    if (line > lines.length) throw new ToolFailure(`Invalid \`insert_line\` parameter: ${line}. It should be within the range of lines of the file: [0, ${lines.length}]`);
    lines.splice(line, 0, ...text.split('\n'));
    const saved = await save(m, raw, w, entry, lines.join('\n'));
    return `The file ${display(w.store, w.path)} has been edited (version ${saved.version}).`;
  },

  async delete(m, i) {
    const raw = need(i.path, 'path', 'delete');
    const w = parsePath(raw);
    if (!w.store || w.path === '/') throw new ToolFailure(`${raw} is ${w.store ? `the whole store ${w.store}` : 'the memory root'}; delete its files one by one, or a folder inside it`);
    const entry = await call(() => m.client.read(m.token, w.store!, w.path, m.signal));
    const paths = entry ? [w.path] : (await call(() => m.client.list(m.token, w.store!, `${w.path}/`, m.signal))).map((e) => e.path);
    if (paths.length === 0) throw missing(raw);
    for (const path of paths) {
      await call(() => m.client.remove(m.token, w.store!, path, m.seen.get(seenKey(w.store!, path)), m.signal));
      m.seen.delete(seenKey(w.store!, path));
    }
    return `Successfully deleted ${raw}${paths.length > 1 ? ` (${paths.length} files)` : ''}`;
  },

  async rename(m, i) {
    const fromRaw = need(i.old_path, 'old_path', 'rename');
    const toRaw = need(i.new_path, 'new_path', 'rename');
    const from = parsePath(fromRaw, 'old_path');
    const to = parsePath(toRaw, 'new_path');
    requireFile(from, fromRaw);
    requireFile(to, toRaw);
    if (from.store !== to.store) throw new ToolFailure(`rename moves files within one store: ${fromRaw} and ${toRaw} are in different stores (create the file in the other store, then delete this one)`);
    const entry = await call(() => m.client.read(m.token, from.store, from.path, m.signal));
    const moves = entry
      ? [[from.path, to.path]]
      : (await call(() => m.client.list(m.token, from.store, `${from.path}/`, m.signal))).map((e) => [e.path, to.path + e.path.slice(from.path.length)]);
    if (moves.length === 0) throw missing(fromRaw);
    for (const [a, b] of moves) {
      const moved = await call(() => m.client.rename(m.token, from.store, { from: a, to: b, expectedVersion: m.seen.get(seenKey(from.store, a)) }, m.signal));
      m.seen.delete(seenKey(from.store, a));
      m.seen.set(seenKey(from.store, b), moved.version);
    }
    return `Successfully renamed ${fromRaw} to ${toRaw}`;
  },
};

export const memoryTool = defineTool({
  name: 'memory',
  description:
    `Your memory, kept across sessions: a directory of text files under ${ROOT}, one folder per memory store (view ${ROOT} to see them, ` +
    'with what each is for, its limits and whether you may write it). Check it at the start of a task; write down what will help later ' +
    '(preferences, facts, decisions, progress) as short, well-named files. Commands: view {path, view_range?} (a folder lists its files, a file ' +
    'shows numbered lines); create {path, file_text} (a new file); str_replace {path, old_str, new_str} (old_str must occur exactly once); ' +
    'insert {path, insert_line, insert_text}; delete {path}; rename {old_path, new_path}. If another session changed a file since you read it, ' +
    'an edit answers a conflict: view the file again and retry.',
  input: Input,
  scope: 'tenant',
  capability: 'memory.use',
  run: (i, ctx) => COMMAND_RUNNERS[i.command](memoryOf(ctx, 'memory'), i),
});

