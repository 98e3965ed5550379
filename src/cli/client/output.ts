import { createConsola, type ConsolaInstance } from 'consola';
import type { ClientEnv } from './env.ts';

/**
 * Output of the client. Data goes to stdout: with `--json` one JSON document (pretty in a terminal, one line when
 * piped), otherwise tab-separated rows or `label: value` lines (aligned in a terminal). Messages, warnings and
 * progress go to stderr through consola, so piped stdout stays parseable.
 */
export interface Output {
  json: boolean;
  /** Messages on stderr. */
  log: ConsolaInstance;
  /** The JSON document of a command (only with --json). */
  data(value: unknown): void;
  /** One compact JSON line (NDJSON streams: device_code, run events). */
  line(value: unknown): void;
  /** Rows of a list; in a terminal, aligned under `header` (piped output has no header, so it stays parseable). */
  rows(rows: Array<Array<string | number | boolean | null | undefined>>, header?: string[]): void;
  fields(pairs: Array<[string, string | number | boolean | null | undefined]>): void;
  text(line: string): void;
  /** Raw text to stdout (streamed assistant text). */
  write(chunk: string): void;
  dim(s: string): string;
  bold(s: string): string;
}

const cell = (v: string | number | boolean | null | undefined) => (v === null || v === undefined ? '-' : String(v));

export function createOutput(env: Pick<ClientEnv, 'stdoutTTY' | 'stderrTTY' | 'color'>, json: boolean): Output {
  const out = (s: string) => process.stdout.write(s);
  const log = createConsola({ fancy: env.stderrTTY, stdout: process.stderr, stderr: process.stderr, formatOptions: { date: false, colors: env.color } });
  const style = (open: number, close: number) => (s: string) => (env.color ? `\u001B[${open}m${s}\u001B[${close}m` : s);
  return {
    json,
    log,
    data: (value) => out((env.stdoutTTY ? JSON.stringify(value, null, 2) : JSON.stringify(value)) + '\n'),
    line: (value) => out(JSON.stringify(value) + '\n'),
    rows(rows, header) {
      const cells = rows.map((r) => r.map(cell));
      if (!env.stdoutTTY) return void out(cells.map((r) => r.join('\t')).join('\n') + (cells.length ? '\n' : ''));
      const head = header && cells.length ? [header.map((h) => h.toUpperCase())] : [];
      const widths: number[] = [];
      for (const r of [...head, ...cells]) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
      const line = (r: string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
      const bold = (s: string) => (env.color ? `\u001B[1m${s}\u001B[22m` : s);
      out([...head.map((r) => bold(line(r))), ...cells.map(line)].join('\n') + (cells.length ? '\n' : ''));
    },
    fields(pairs) {
      const width = env.stdoutTTY ? Math.max(...pairs.map(([k]) => k.length)) + 1 : 0;
      out(pairs.map(([k, v]) => `${(k + ':').padEnd(width)} ${cell(v)}`).join('\n') + '\n');
    },
    text: (line) => out(line + '\n'),
    write: (chunk) => out(chunk),
    dim: style(2, 22),
    bold: style(1, 22),
  };
}
