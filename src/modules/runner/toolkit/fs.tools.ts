import { z } from 'zod';
import { editText, listDir, readFile, searchFiles, writeText, type FileRead } from '../vfs/index.ts';
import { defineTool } from './tool.ts';

/**
 * The file tools: every path is a VirtualFS path (`/work/...` for session scratch, `/home/...` for the profile's
 * persistent home, `/pool/<pool>/...` for a pool's shared area; relative paths are under `/work`).
 */
const path = z.string().describe('VirtualFS path: /work/..., /home/..., /pool/<pool>/...; relative paths are under /work');

export const fsRead = defineTool({
  name: 'fs_read',
  description:
    'Read a file (up to 1 MiB) from the session VirtualFS. A text file comes back as text; a binary file (a NUL byte, or ' +
    'not UTF-8) is described by its size and media type, and with encoding "base64" its bytes come back in base64. A larger ' +
    'file is read in pieces with offset.',
  input: z.object({
    path,
    encoding: z.enum(['text', 'base64']).default('text').describe('"base64" returns the bytes of any file, binary or not'),
    offset: z.number().int().min(0).optional().describe('The byte to start at (0, the first, by default): the next piece of a truncated read starts where the last ended'),
  }),
  scope: 'session',
  capability: 'fs.read',
  run: ({ path: p, encoding, offset }, ctx) => readFile(ctx.vfs(), p, { encoding, offset }),
  text: (v: FileRead) => {
    if ('binary' in v) return `[binary file ${v.path}: ${v.size} bytes, ${v.mediaType}; not shown as text. fs_read with encoding "base64" returns its bytes]`;
    return v.truncated ? `${v.content}\n[truncated: file is ${v.size} bytes]` : v.content;
  },
});

export const fsWrite = defineTool({
  name: 'fs_write',
  description: 'Create or overwrite a text file (up to 4 MiB); parent directories are created.',
  input: z.object({ path, content: z.string() }),
  scope: 'session',
  capability: 'fs.write',
  run: ({ path: p, content }, ctx) => writeText(ctx.vfs(), p, content),
});

export const fsEdit = defineTool({
  name: 'fs_edit',
  description: 'Replace an exact string in a file. old_string must occur exactly once unless replace_all is true.',
  input: z.object({ path, old_string: z.string().min(1), new_string: z.string(), replace_all: z.boolean().default(false) }),
  scope: 'session',
  capability: 'fs.write',
  run: (i, ctx) => editText(ctx.vfs(), i.path, i.old_string, i.new_string, i.replace_all),
});

export const fsList = defineTool({
  name: 'fs_list',
  description: 'List a directory (default /work); `/` lists the mounts. Symbolic links are shown, never followed.',
  input: z.object({ path: path.default('/work'), recursive: z.boolean().default(false), max_entries: z.number().int().min(1).max(5000).default(500) }),
  scope: 'session',
  capability: 'fs.read',
  run: (i, ctx) => listDir(ctx.vfs(), i.path, i.recursive, i.max_entries),
});

export const fsSearch = defineTool({
  name: 'fs_search',
  description: 'Search text files below a path (default /work) for a substring, or a regular expression (RE2 syntax: no backreferences or lookaround) with regex true.',
  input: z.object({
    pattern: z.string().min(1),
    path: path.default('/work'),
    regex: z.boolean().default(false),
    ignore_case: z.boolean().default(false),
    max_results: z.number().int().min(1).max(1000).default(100),
  }),
  scope: 'session',
  capability: 'fs.read',
  run: (i, ctx) => searchFiles(ctx.vfs(), i.path, { pattern: i.pattern, regex: i.regex, ignoreCase: i.ignore_case, maxResults: i.max_results }),
});
