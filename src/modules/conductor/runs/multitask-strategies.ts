import { badRequest } from '../../../shared/errors.ts';

/**
 * The strategies of a run posted to a busy session (multitask.ts), a leaf the profile schema reads too. `reject` is
 * the default: 409 `session busy`, as before.
 */
export const MULTITASK = ['reject', 'enqueue', 'interrupt'] as const;
export type Multitask = (typeof MULTITASK)[number];

export function parseMultitask(value: unknown, field = 'multitask'): Multitask {
  if (typeof value === 'string' && (MULTITASK as readonly string[]).includes(value)) return value as Multitask;
  throw badRequest(`${field}: expected one of ${MULTITASK.join(', ')}`);
}
