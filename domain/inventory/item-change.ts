import type { EntityManager } from '@mikro-orm/postgresql';

export type ItemChangeKind = 'created' | 'updated' | 'deleted';

/** The columns of an `item_change` row written from an item row (see itemChangeSelect). */
const ITEM_CHANGE_COLUMNS =
  'xid, item_id, kind, version, at, name, sku, quantity, price, minimum_quantity, supplier_id, reorder_point, order_up_to_quantity';

/**
 * A change's place in the feed (`xid`), from the function `item_change_place` (migration Ledger): the writing
 * transaction's id, or the item's previous place when that is larger. A transaction gets its id at its first
 * write, which may come before it waits for an item's row lock behind a transaction with a larger id; taking the
 * larger place keeps each item's changes in version order, and a place is never below the id of a transaction
 * that could still write it (the feed's xmin rule holds). The function reads with a snapshot of its own, taken
 * after the row lock: the statement's snapshot predates the lock wait and would miss the previous change.
 */
const feedPlace = (itemId: string): string => `item_change_place(${itemId})`;

/**
 * The select that turns the item rows of `source` (inventory_item columns) into item-change rows of `kind` at
 * `at` (an SQL expression). A deletion carries the version after the item's last one.
 */
const itemChangeSelect = (source: string, kind: ItemChangeKind, at: string, place: string): string =>
  `select ${place}, ${source}.id, '${kind}', ${source}.version${kind === 'deleted' ? ' + 1' : ''}, ${at}, ${source}.name,
          ${source}.sku, ${source}.quantity, ${source}.price::numeric, ${source}.minimum_quantity, ${source}.supplier_id,
          ${source}.reorder_point, ${source}.order_up_to_quantity
     from ${source}`;

/**
 * The statement part (a CTE body) that records the item rows of `source` as changes of `kind` at `at`.
 * `freshIds`: the rows are items just created under ids freshly drawn with gen_random_uuid(), which no earlier
 * change can carry, so their place is the transaction's id without looking for a previous change (one function
 * call and index probe less per row of a large import).
 */
export const itemChangeInsert = (
  source: string,
  kind: ItemChangeKind,
  at: string,
  freshIds = false,
): string =>
  `insert into item_change (${ITEM_CHANGE_COLUMNS}) ${itemChangeSelect(
    source,
    kind,
    at,
    freshIds ? 'pg_current_xact_id()' : feedPlace(`${source}.id`),
  )}`;

/**
 * Records the current state of item `itemId` as a change of `kind` (contract: every change of an item writes an
 * item-change record with its new version in the same transaction). Call it in the change's transaction while
 * the row is locked, after the change (before the delete for a deletion). The change's time is the row's
 * `updated_at`, which the change set to clock_timestamp() after taking the row lock (a creation sets
 * `created_at` to the same value), so `asOf` at the instants the API shows for an item includes the change shown
 * there; a deletion, which leaves no row to show, takes the clock now. Returns that time, which the same
 * change's stock events take as theirs, so a point-in-time read and the history agree to the microsecond.
 */
export async function recordItemChange(
  tx: EntityManager,
  itemId: string,
  kind: ItemChangeKind,
): Promise<string> {
  const rows = await tx.execute<{ at: string }[]>(
    `with i as (select * from inventory_item where id = ?)
     ${itemChangeInsert('i', kind, kind === 'deleted' ? 'clock_timestamp()' : 'i.updated_at')} returning at::text as at`,
    [itemId],
  );
  return rows[0].at;
}
