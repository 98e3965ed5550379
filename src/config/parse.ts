import * as v from 'valibot';

/**
 * Reading one variable: the error every section of the configuration throws, and the readers they share. A bad value
 * throws ConfigError naming the variable and what is allowed; `svc` prints it and exits 2.
 */
export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, allowed: string) {
    super(`${variable}: ${allowed}`);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

export function int(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigError(name, `got "${raw}"; allowed: an integer from ${min} to ${max}`);
  return n;
}

export function url(name: string, raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!v.is(v.pipe(v.string(), v.url(), v.regex(/^https?:\/\//)), raw)) throw new ConfigError(name, `got "${raw}"; allowed: an http(s) URL`);
  return raw.replace(/\/+$/, '');
}

export function pick<T extends string>(name: string, raw: string | undefined, allowed: readonly T[], fallback: T): T {
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(name, `got "${raw}"; allowed: ${allowed.join(', ')}`);
  return raw as T;
}
