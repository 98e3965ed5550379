import type { Kysely } from 'kysely';
import { withTenant, type DB } from '../../../db/index.ts';
import { AppError, badRequest, conflict, notFound } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import type { Page } from '../../crud/index.ts';
import type { MemoryConfig } from '../../../config/config.ts';
import { readNote, writeNote } from '../memory/index.ts';
import { getSpec } from '../profiles/profiles.repo.ts';
import type { CreateAutomation, UpdateAutomation } from './automation.schema.ts';
import { MEMORY_MAX_BYTES } from './automation.schema.ts';
import {
  getAutomation,
  insertAutomation,
  listAutomations,
  toAutomation,
  updateAutomation,
  type Automation,
  type AutomationPatch,
  type AutomationRow,
} from './automations.repo.ts';
import { checkCadence, nextSlot, type Cadence } from './schedule.ts';

/**
 * Automations and their transitions (seed 000 "States and transitions", Automation). The clock is a parameter so the
 * transitions are testable; firing lives in firing.service.ts.
 */
export interface AutomationDeps {
  db: Kysely<DB>;
  /** The operator's memory ceilings: the note is an entry of a memory store (memory/automation-note.ts). */
  memory: MemoryConfig;
  now?: () => Date;
}

const cadenceOf = (a: Pick<AutomationRow, 'cron' | 'timezone' | 'startAt' | 'endAt'>): Cadence => ({
  cron: a.cron,
  timezone: a.timezone,
  startAt: a.startAt ? new Date(a.startAt) : null,
  endAt: a.endAt ? new Date(a.endAt) : null,
});

export { cadenceOf };

async function requireProfile(deps: AutomationDeps, tenantId: string, profile: string): Promise<void> {
  if (!(await withTenant(deps.db, tenantId, (tx) => getSpec(tx, 'profiles', profile)))) throw badRequest(`profile: unknown profile: ${profile}`);
}

export async function createAutomation(deps: AutomationDeps, tenantId: string, body: CreateAutomation): Promise<Automation> {
  const now = deps.now?.() ?? new Date();
  const cadence = { cron: body.cron, timezone: body.timezone, startAt: body.startAt ? new Date(body.startAt) : null, endAt: body.endAt ? new Date(body.endAt) : null };
  checkCadence(cadence, now);
  const nextRunAt = nextSlot(cadence, now);
  if (!nextRunAt) throw badRequest('endAt: the window has already closed');
  await requireProfile(deps, tenantId, body.profile);
  const row = await withTenant(deps.db, tenantId, (tx) =>
    insertAutomation(tx, { id: prefixedId('aut'), tenantId, ...body, ...cadence, nextRunAt }),
  );
  if (!row) throw conflict(`name taken: an automation named ${body.name} exists`);
  return toAutomation(row);
}

export function listAll(deps: AutomationDeps, tenantId: string, filter: { q?: string; includeDeleted: boolean }, page: Page) {
  return withTenant(deps.db, tenantId, (tx) => listAutomations(tx, filter, page));
}

export async function getOne(deps: AutomationDeps, tenantId: string, id: string): Promise<AutomationRow> {
  const row = await withTenant(deps.db, tenantId, (tx) => getAutomation(tx, id));
  if (!row) throw notFound(`unknown automation: ${id}`);
  return row;
}

/** Runs `fn` on the locked, live automation; a deleted one is 404 to every transition. */
async function transition(deps: AutomationDeps, tenantId: string, id: string, fn: (row: AutomationRow, now: Date) => AutomationPatch): Promise<Automation> {
  const now = deps.now?.() ?? new Date();
  return withTenant(deps.db, tenantId, async (tx) => {
    const row = await getAutomation(tx, id, { forUpdate: true });
    if (!row || row.deletedAt) throw notFound(`unknown automation: ${id}`);
    return toAutomation(await updateAutomation(tx, id, fn(row, now)));
  });
}

/** Active again, next run from now (no catch-up), failures cleared; 409 once the window's end has passed. */
export function startAutomation(deps: AutomationDeps, tenantId: string, id: string): Promise<Automation> {
  return transition(deps, tenantId, id, (row, now) => {
    if (row.endAt && new Date(row.endAt) <= now) throw conflict(`automation ${id} is past its end date (${row.endAt})`);
    const next = nextSlot(cadenceOf(row), now);
    if (!next) throw conflict(`automation ${id} has no slot left before its end date (${row.endAt})`);
    return { status: 'active', next_run_at: next, consecutive_failures: 0 };
  });
}

export function stopAutomation(deps: AutomationDeps, tenantId: string, id: string): Promise<Automation> {
  return transition(deps, tenantId, id, () => ({ status: 'stopped', next_run_at: null }));
}

/**
 * Soft delete: stopped and hidden from lists. A firing in flight finishes as an ordinary run and its outcome is still
 * recorded (the row stays for the firings list).
 */
export function deleteAutomation(deps: AutomationDeps, tenantId: string, id: string): Promise<Automation> {
  return transition(deps, tenantId, id, (_row, now) => ({ status: 'stopped', next_run_at: null, deleted_at: now }));
}

/** PUT: a disabled automation is 409 until started; an active one gets its next run recomputed, or stops when its window is closed. */
export async function updateOne(deps: AutomationDeps, tenantId: string, id: string, body: UpdateAutomation): Promise<Automation> {
  if (body.profile !== undefined) await requireProfile(deps, tenantId, body.profile);
  return transition(deps, tenantId, id, (row, now) => {
    if (body.name !== undefined && body.name !== row.name) throw badRequest('name: an automation cannot be renamed');
    if (row.status === 'disabled') throw conflict(`automation ${id} is disabled; start it before updating it`);
    const merged = {
      cron: body.cron ?? row.cron,
      timezone: body.timezone ?? row.timezone,
      startAt: body.startAt !== undefined ? body.startAt : row.startAt,
      endAt: body.endAt !== undefined ? body.endAt : row.endAt,
    };
    const cadence = cadenceOf(merged);
    checkCadence(cadence, now);
    const patch: AutomationPatch = {
      cron: cadence.cron,
      timezone: cadence.timezone,
      start_at: cadence.startAt,
      end_at: cadence.endAt,
      ...(body.profile !== undefined ? { profile: body.profile } : {}),
      ...(body.prompt !== undefined ? { prompt: body.prompt } : {}),
      ...(body.sessionMode !== undefined ? { session_mode: body.sessionMode } : {}),
      ...(body.overlap !== undefined ? { overlap: body.overlap } : {}),
      ...(body.maxConsecutiveFailures !== undefined ? { max_consecutive_failures: body.maxConsecutiveFailures } : {}),
    };
    if (row.status === 'active') {
      const next = nextSlot(cadence, now);
      return { ...patch, next_run_at: next, ...(next ? {} : { status: 'stopped' as const }) };
    }
    return patch;
  });
}

/** The note: the one entry of the automation's memory store; `{body: ''}` without updatedAt when never written. */
export async function getMemory(deps: AutomationDeps, tenantId: string, id: string): Promise<{ body: string; updatedAt?: string }> {
  await getOne(deps, tenantId, id);
  return readNote({ db: deps.db, config: deps.memory }, tenantId, id);
}

/** Rewrites the note (a new version of its entry); `actor` is who, as memory versions record it. */
export async function putMemory(deps: AutomationDeps, tenantId: string, id: string, body: string, actor: string): Promise<{ body: string; updatedAt: string }> {
  const bytes = Buffer.byteLength(body, 'utf8');
  if (bytes > MEMORY_MAX_BYTES) throw new AppError(413, `body: the memory note is ${bytes} bytes; at most ${MEMORY_MAX_BYTES}`);
  const row = await getOne(deps, tenantId, id);
  if (row.deletedAt) throw notFound(`unknown automation: ${id}`);
  return writeNote({ db: deps.db, config: deps.memory }, tenantId, { id: row.id, name: row.name }, body, actor);
}
