import type { ColumnType } from 'kysely';

/** Column helper types shared by every table file: timestamps and jsonb as Kysely reads and writes them. */
export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
export type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
export type Json<T = unknown> = ColumnType<T, string | T | undefined, string | T>;
