import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import type { RunEvent } from '../../../contracts/run-event.ts';
import type { Logger } from '../../../shared/log.ts';
import type { Hub } from './hub.ts';
import { appendEvents } from './runs.repo.ts';

/**
 * The durable event log, written in batches: events queue in memory and one multi-row INSERT per tenant lands them
 * every `flushMs` (or sooner when `maxBatch` are waiting), never one transaction per token. `flush()` is awaited before
 * a run's status changes, so the log always holds the terminal event of a finished run.
 */
export interface EventLog {
  append(tenantId: string, runId: string, seq: number, event: RunEvent): void;
  flush(): Promise<void>;
  close(): Promise<void>;
}

interface Pending {
  tenantId: string;
  runId: string;
  seq: number;
  event: RunEvent;
}

export function createEventLog(deps: { db: Kysely<DB>; hub: Hub; log: Logger; flushMs?: number; maxBatch?: number }): EventLog {
  const flushMs = deps.flushMs ?? 15;
  const maxBatch = deps.maxBatch ?? 500;
  let queue: Pending[] = [];
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();

  async function write(batch: Pending[]): Promise<void> {
    const byTenant = new Map<string, Pending[]>();
    for (const p of batch) {
      let list = byTenant.get(p.tenantId);
      if (!list) byTenant.set(p.tenantId, (list = []));
      list.push(p);
    }
    for (const [tenantId, rows] of byTenant) {
      await withTenant(deps.db, tenantId, (tx) => appendEvents(tx, tenantId, rows));
    }
    const last = new Map<string, { tenantId: string; runId: string; seq: number }>();
    for (const p of batch) last.set(p.runId, { tenantId: p.tenantId, runId: p.runId, seq: p.seq });
    await deps.hub.announce([...last.values()]).catch((err) => deps.log.warn('announcing run events failed', { error: String(err) }));
  }

  function flush(): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    if (queue.length === 0) return inFlight;
    const batch = queue;
    queue = [];
    // Batches land in order: each write starts after the previous one finished.
    inFlight = inFlight.then(() => write(batch)).catch((err) => deps.log.error('writing run events failed', { error: String(err), events: batch.length }));
    return inFlight;
  }

  return {
    append(tenantId, runId, seq, event) {
      queue.push({ tenantId, runId, seq, event });
      if (queue.length >= maxBatch) void flush();
      else timer ??= setTimeout(() => void flush(), flushMs);
    },
    flush,
    async close() {
      await flush();
    },
  };
}
