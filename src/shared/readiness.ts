/**
 * Readiness reports for `/readyz`: each module says whether the dependencies it needs to serve answer now. Liveness
 * (`/healthz`) stays a plain "the process serves HTTP"; readiness is what a load balancer or Kubernetes uses to send
 * traffic, so it names what failed.
 */
export interface CheckResult {
  name: string;
  ok: boolean;
  ms: number;
  error?: string;
  /** What a passing check found, when that is worth showing (the container engine's version and image). */
  detail?: string;
  /** What a passing check found that the operator should know (a runner enforcing sandbox limits only in part). */
  warning?: string;
}

export interface ReadyReport {
  ready: boolean;
  checks: CheckResult[];
  /** One sentence per reason the instance is not ready. */
  problems: string[];
}

export const PROBE_TIMEOUT_MS = 2000;

/** Runs one check, bounded by `timeoutMs`; a throw or a timeout is a failed check naming why. Never throws. */
export async function probe(name: string, check: () => Promise<unknown>, timeoutMs = PROBE_TIMEOUT_MS): Promise<CheckResult> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { name, ok: true, ms: Math.round(performance.now() - started) };
  } catch (err) {
    return { name, ok: false, ms: Math.round(performance.now() - started), error: err instanceof Error ? err.message || err.name : String(err) };
  } finally {
    clearTimeout(timer);
  }
}

/** Ready when every check passed. */
export function allOf(checks: CheckResult[]): ReadyReport {
  const failed = checks.filter((c) => !c.ok);
  return { ready: failed.length === 0, checks, problems: failed.map((c) => `${c.name}: ${c.error}`) };
}

/**
 * Ready when at least one of a set of interchangeable dependencies passed (a fleet of runners, the workers of a
 * runner): one of N down degrades the service, it does not stop it. None configured is `none` (a problem if given).
 */
export function anyOf(what: string, checks: CheckResult[], none?: string): ReadyReport {
  if (checks.length === 0) return { ready: none === undefined, checks, problems: none === undefined ? [] : [`${what}: ${none}`] };
  if (checks.some((c) => c.ok)) return { ready: true, checks, problems: [] };
  return { ready: false, checks, problems: [`${what} unreachable: ${checks.map((c) => `${c.name} (${c.error})`).join(', ')}`] };
}

export function merge(reports: ReadyReport[]): ReadyReport {
  return { ready: reports.every((r) => r.ready), checks: reports.flatMap((r) => r.checks), problems: reports.flatMap((r) => r.problems) };
}
