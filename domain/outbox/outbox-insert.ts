import { pendingRowsInsert } from './consumers.js';

/** What one outbox insert writes: SQL expressions for its columns, over the rows of `from` (none: one row). */
export interface OutboxRowsSql {
  /** The event type: an SQL expression, e.g. `'stock.changed'` or `?`. */
  type: string;
  /** The aggregate id as text. */
  aggregateId: string;
  /** The payload as jsonb (see payloadSql). */
  payload: string;
  /** The rest of the select after its list: `from ... where ... order by ...` (rows are inserted in that order). */
  from?: string;
}

/**
 * THE way an event is written: the CTEs (`<name> as (...), <name>_pending as (...)`) that insert the outbox rows
 * of `rows` and their consumers' pending rows in the same statement, so a change, its events and their pending
 * work commit together. `<name>` yields each new event's `id` and `part`. Put it in a `with` list next to the
 * change it records: one statement, one round trip.
 */
export const outboxInsertSql = (name: string, rows: OutboxRowsSql): string =>
  `${name} as (
  insert into outbox_event (type, aggregate_id, payload)
  select ${rows.type}, ${rows.aggregateId}, ${rows.payload}
  ${rows.from ?? ''}
  returning id, part
), ${name}_pending as (${pendingRowsInsert(name)})`;

/** A payload's fields as SQL expressions, keyed by the payload type's property names (optional ones optional). */
export type PayloadSql<P> = { [K in keyof P]: string };

/** jsonb's own key order (shorter first, then bytewise; the keys are ASCII). */
const jsonbKeyOrder = ([a]: [string, unknown], [b]: [string, unknown]) =>
  a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);

/**
 * A payload as a jsonb expression from its fields' SQL expressions (absent optional fields are left out). jsonb
 * stores its keys in its own order whatever order they come in; they are passed in that order, which
 * jsonb_build_object finds already sorted instead of sorting them for every row of a large statement.
 */
export const payloadSql = <P>(fields: PayloadSql<P>): string =>
  `jsonb_build_object(${Object.entries(fields as Record<string, string | undefined>)
    .filter(([, expression]) => expression !== undefined)
    .sort(jsonbKeyOrder)
    .map(([key, expression]) => `'${key}', ${expression}`)
    .join(', ')})`;

/** An event's time (a timestamptz expression) as its payloads carry it: ISO-8601 UTC with microseconds. */
export const occurredAtSql = (timestamptz: string): string =>
  `to_char(${timestamptz} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
