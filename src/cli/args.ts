/**
 * Flags shared by the client commands, in one place. Every client subcommand spreads `globalArgs`; `--yes` is shared
 * by the commands that ask before acting.
 */
export const globalArgs = {
  json: { type: 'boolean', description: 'print JSON instead of plain text' },
  context: { type: 'string', description: 'the context to use (default: SVC_CONTEXT, then the current context, then "default")', valueHint: 'name' },
  'api-url': { type: 'string', description: 'the API URL (overrides SVC_API_URL and the context)', valueHint: 'url' },
  debug: { type: 'boolean', description: 'on an unexpected error, print its stack trace too (or SVC_DEBUG=1)' },
} as const;

export const yesArg = {
  yes: { type: 'boolean', alias: 'y', description: 'do not ask for confirmation (required in scripts)' },
} as const;

export const limitArg = {
  limit: { type: 'string', description: 'how many rows (default 20)', valueHint: 'n' },
} as const;

export interface GlobalFlags {
  json?: boolean;
  context?: string;
  'api-url'?: string;
}
