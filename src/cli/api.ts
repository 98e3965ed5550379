import { readFileSync } from 'node:fs';
import { defineCommand } from 'citty';
import { globalArgs } from './args.ts';
import { CliError, EXIT, usageError } from './client/exit.ts';
import { ApiError } from './client/http.ts';
import { openSession } from './client/session.ts';

/**
 * `svc api <method> <path> [--data <json|@file|@->]`: a raw, authenticated call of the API, like `gh api`. The
 * response body goes to stdout as it came (JSON pretty-printed in a terminal); a non-2xx status prints its body too
 * and exits 1 (401: 3, 404: 4), so scripts can read the error.
 */
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

function readData(raw: string): unknown {
  const text = raw === '@-' ? readFileSync(0, 'utf8') : raw.startsWith('@') ? readFileSync(raw.slice(1), 'utf8') : raw;
  try {
    return JSON.parse(text);
  } catch {
    throw usageError(`--data: expected JSON (or @file, @- for stdin)`);
  }
}

export default defineCommand({
  meta: { name: 'api', description: 'Call the API directly (authenticated), like `gh api`' },
  args: {
    ...globalArgs,
    method: { type: 'positional', description: METHODS.join(' | '), required: true },
    path: { type: 'positional', description: 'the path, e.g. /api/profiles', required: true },
    data: { type: 'string', alias: 'd', description: 'a JSON body, @file or @- (stdin)', valueHint: 'json' },
  },
  async run({ args }) {
    const method = String(args.method).toUpperCase();
    if (!METHODS.includes(method)) throw usageError(`method: expected one of ${METHODS.join(', ')}, got "${args.method}"`);
    const path = String(args.path);
    if (!path.startsWith('/')) throw usageError(`path: expected a path starting with /, got "${path}"`);
    if (args.data !== undefined && (method === 'GET' || method === 'HEAD')) throw usageError(`--data: a ${method} request has no body`);
    const body = args.data !== undefined ? readData(args.data) : undefined;
    const { out, api, env } = openSession(args, { needKey: true });
    let status: number;
    let text: string;
    try {
      const res = await api.raw(method, path, { body, accept: 'application/json, text/plain;q=0.9, */*;q=0.8', timeoutMs: 60_000 });
      status = res.status;
      text = await res.text();
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      status = err.status;
      text = typeof err.body === 'string' ? err.body : JSON.stringify(err.body);
    }
    if (text) {
      let shown = text;
      try {
        shown = JSON.stringify(JSON.parse(text), null, env.stdoutTTY && !args.json ? 2 : undefined);
      } catch {
        // not JSON: as it came
      }
      out.write(shown.endsWith('\n') ? shown : shown + '\n');
    }
    if (status >= 200 && status < 300) return;
    const code = status === 401 ? EXIT.auth : status === 404 ? EXIT.notFound : EXIT.failure;
    throw new CliError(code, `${method} ${path}: HTTP ${status}`);
  },
});
