/**
 * One tagged logger per module: a constant sentence plus a facts object. JSON lines when stderr is not a terminal,
 * short readable lines when it is. Level from the caller (config), never from process.env here. A line written
 * while a traced span is active carries its `trace_id` and `span_id` (shared/tracing).
 */
import { traceFacts } from './tracing/index.ts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(msg: string, facts?: Record<string, unknown>): void;
  info(msg: string, facts?: Record<string, unknown>): void;
  warn(msg: string, facts?: Record<string, unknown>): void;
  error(msg: string, facts?: Record<string, unknown>): void;
  child(tag: string): Logger;
}

let threshold = ORDER.info;
let json = !process.stderr.isTTY;

export function configureLogging(opts: { level?: LogLevel; json?: boolean }): void {
  if (opts.level) threshold = ORDER[opts.level];
  if (opts.json !== undefined) json = opts.json;
}

export function createLogger(tag: string): Logger {
  const write = (level: Exclude<LogLevel, 'silent'>, msg: string, facts?: Record<string, unknown>) => {
    if (ORDER[level] < threshold) return;
    // inside a traced run the line names its trace and span, so logs and traces join on trace_id
    const traced = traceFacts();
    if (traced) facts = { ...facts, ...traced };
    const line = json
      ? JSON.stringify({ time: new Date().toISOString(), level, tag, msg, ...facts })
      : `${level.padEnd(5)} [${tag}] ${msg}${facts && Object.keys(facts).length ? ' ' + JSON.stringify(facts) : ''}`;
    process.stderr.write(line + '\n');
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (t) => createLogger(`${tag}:${t}`),
  };
}
