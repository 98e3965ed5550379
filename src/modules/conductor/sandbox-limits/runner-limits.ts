import type { RunnerInfo } from '../../../contracts/runner.wire.ts';
import { LIMIT_KEYS, LIMIT_LABEL, type LimitsReport } from '../../../contracts/sandbox-limits.ts';

/**
 * What a runner says of its limits (`GET /runner/info` `limits`), read as optional: runners from before it have none.
 * `/api/topology` shows it, the conductor's `/readyz` names it in each runner's check and warns when limits are off
 * or only partly enforced, and `svc doctor` repeats that line.
 */
export function runnerLimitsOf(info: RunnerInfo | undefined): LimitsReport | undefined {
  const limits = (info as { limits?: unknown } | undefined)?.limits as Partial<LimitsReport> | undefined;
  return limits && typeof limits.mode === 'string' && limits.enforced && typeof limits.enforced === 'object' ? ({ missing: [], ...limits } as LimitsReport) : undefined;
}

/**
 * `sandbox limits require: cgroup-v1 (memory, cpu, pids), rlimit (cpu time, file size, open files), …`, grouped by
 * mechanism, then `; all sandboxes together at most 1 CPUs` where the runner caps them.
 */
export function limitsSummary(report: LimitsReport): string {
  const by = new Map<string, string[]>();
  for (const k of LIMIT_KEYS) {
    const how = report.enforced[k] ?? 'none';
    by.set(how, [...(by.get(how) ?? []), LIMIT_LABEL[k]]);
  }
  const parts = [...by].map(([how, labels]) => `${how} (${labels.join(', ')})`);
  return `sandbox limits ${report.mode}: ${parts.join(', ')}${typeof report.totalCpus === 'number' ? `; all sandboxes together at most ${report.totalCpus} CPUs` : ''}`;
}

/** A warning for `/readyz` when the runner enforces less than it was asked to (off, or best-effort with mechanisms missing). */
export function limitsWarning(report: LimitsReport): string | undefined {
  if (report.mode === 'off') return 'sandbox limits off (SVC_SANDBOX_LIMITS=off): what agents start is not limited';
  if (report.mode === 'best-effort' && report.missing.length) return `sandbox limits best-effort, not enforced: ${report.missing.join('; ')}`;
  return undefined;
}

/** The runner's check of the conductor's `/readyz`, with its limits as `detail` and `warning`. */
export function runnerLimitsCheck(info: RunnerInfo | undefined): { detail?: string; warning?: string } {
  const report = runnerLimitsOf(info);
  if (!report) return {};
  const warning = limitsWarning(report);
  return { detail: limitsSummary(report), ...(warning ? { warning } : {}) };
}
