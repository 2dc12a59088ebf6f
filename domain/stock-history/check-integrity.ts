import type { EntityManager } from '@mikro-orm/postgresql';
import Cursor from 'pg-cursor';
import { STOCK_CHANGED, type StockChangedPayload } from '../outbox/events.js';
import { ANALYTICS_CONSUMER, STOCK_HISTORY_CONSUMER } from '../outbox/consumers.js';
import { pendingForSql } from '../outbox/pending-events.js';
import { nativePool } from '../shared/native-transaction.js';
import { numericToCents } from '../shared/money.js';
import { latestDayRow } from '../analytics/latest-day-row.js';

export type DriftKind = 'quantity_mismatch' | 'chain_break' | 'negative_quantity' | 'value_mismatch';

export interface Drift {
  itemId: string;
  kind: DriftKind;
  detail: string;
  entryIds: string[];
}

export interface IntegrityResult {
  checkedItems: number;
  checkedEntries: number;
  pendingItems: number;
  drift: Drift[];
}

/** Entries read per fetch of the scan (the memory bound of a batch). */
const BATCH = 5_000;
/** Drift reports kept per item and kind (the entry ids of the first ones). */
const MAX_ENTRY_IDS = 20;

/** What the history says of an item so far, in event order. */
interface ItemState {
  sum: number;
  lastAfter: number | null;
  lastEntryId: number | null;
  /** The last step's unit price; null when it is a history entry's (read for the last entries only, at the end). */
  lastPrice: string | null;
  drift: Map<DriftKind, Drift>;
}

function report(state: ItemState, itemId: string, kind: DriftKind, detail: string, ids: (number | null)[]) {
  const entryIds = ids.filter((id): id is number => id !== null).map(String);
  const found = state.drift.get(kind);
  if (!found) state.drift.set(kind, { itemId, kind, detail, entryIds });
  else if (found.entryIds.length < MAX_ENTRY_IDS) found.entryIds.push(...entryIds);
}

const newState = (): ItemState => ({
  sum: 0,
  lastAfter: null,
  lastEntryId: null,
  lastPrice: null,
  drift: new Map(),
});

interface Step {
  itemId: string;
  /** The history entry's id (ids stay far below 2^53); null for an event still pending for the history. */
  entryId: number | null;
  change: number;
  before: number;
  after: number;
  /** A pending event's unit price (a history entry's is read at the end). */
  price: string | null;
}

/** One entry (or pending event, without an entry id) applied to its item's state, in the item's event order. */
function apply(states: Map<string, ItemState>, s: Step) {
  let state = states.get(s.itemId);
  if (!state) {
    state = newState();
    states.set(s.itemId, state);
  }
  const ids = [state.lastEntryId, s.entryId];
  if (state.lastAfter !== null && s.before !== state.lastAfter)
    report(state, s.itemId, 'chain_break', `quantityBefore ${s.before} after ${state.lastAfter}`, ids);
  state.sum += s.change;
  if (state.sum < 0 || s.after < 0)
    report(state, s.itemId, 'negative_quantity', `quantity ${Math.min(state.sum, s.after)}`, [s.entryId]);
  state.lastAfter = s.after;
  state.lastEntryId = s.entryId ?? state.lastEntryId;
  state.lastPrice = s.price;
}

/**
 * The integrity check (contract, "Integrity"): within ONE snapshot (a repeatable-read, read-only transaction),
 * each item's history in event order plus its events still pending for the history consumer is compared with the
 * item (quantity_mismatch), with itself (chain_break, negative_quantity) and with its latest daily rollup
 * (value_mismatch; items with events pending for the analytics consumer are counted in `pendingItems` and not
 * judged). The history is read in batches through a cursor, so memory follows the number of items, not entries.
 * Read-only: drift is reported, never repaired.
 */
export async function checkIntegrity(
  em: EntityManager,
  onProgress: (percent: number) => Promise<void> = async () => undefined,
): Promise<IntegrityResult> {
  const client = await (await nativePool(em)).connect();
  let broken = false;
  try {
    await client.query('begin isolation level repeatable read read only');
    await client.query('set local statement_timeout = 0');
    const { rows: estimate } = await client.query<{ n: string }>(
      "select greatest(reltuples, 1)::bigint::text as n from pg_class where relname = 'stock_history'",
    );
    const total = Math.max(1, Number(estimate[0]?.n ?? 1));
    const states = new Map<string, ItemState>();
    let checkedEntries = 0;
    // Rows as arrays of few values (ids as numbers, no prices): the scan allocates little per entry, so the
    // worker's small young generation is collected less often.
    const cursor = client.query(
      new Cursor<[string, number, number, number, number]>(
        `select item_id, id::float8, change, quantity_before, quantity_after from stock_history order by outbox_event_id`,
        [],
        { rowMode: 'array' },
      ),
    );
    for (;;) {
      const rows = await cursor.read(BATCH);
      if (rows.length === 0) break;
      for (const [itemId, entryId, change, before, after] of rows)
        apply(states, { itemId, entryId, change, before, after, price: null });
      checkedEntries += rows.length;
      await onProgress(Math.min(90, Math.floor((checkedEntries / total) * 90)));
    }
    await cursor.close();
    const { rows: pending } = await client.query<{ payload: StockChangedPayload }>(
      `select o.payload from outbox_event o
        where o.type = '${STOCK_CHANGED}' and ${pendingForSql([STOCK_HISTORY_CONSUMER], 'o')}
          and not exists (select 1 from stock_history h where h.outbox_event_id = o.id)
        order by o.id`,
    );
    for (const { payload: p } of pending)
      apply(states, {
        itemId: p.itemId,
        entryId: null,
        change: p.change,
        before: p.quantityBefore,
        after: p.quantityAfter,
        price: p.priceAtChange,
      });
    const { rows: items } = await client.query<{ id: string; quantity: number }>(
      'select id, quantity from inventory_item',
    );
    for (const item of items) {
      const state = states.get(item.id) ?? newState();
      if (state.sum !== item.quantity) {
        states.set(item.id, state);
        report(
          state,
          item.id,
          'quantity_mismatch',
          `item quantity ${item.quantity}, history sum ${state.sum}`,
          [state.lastEntryId],
        );
      }
    }
    const { rows: analyticsPending } = await client.query<{ item_id: string }>(
      `select distinct e.aggregate_id as item_id from outbox_pending x join outbox_event e on e.id = x.id
        where x.consumer = ${ANALYTICS_CONSUMER.code} and x.done_at is null and e.type = '${STOCK_CHANGED}'`,
    );
    const skip = new Set(analyticsPending.map(r => r.item_id));
    const judged = [...states.keys()].filter(id => !skip.has(id) && states.get(id)!.lastAfter !== null);
    for (let i = 0; i < judged.length; i += 1000) {
      const ids = judged.slice(i, i + 1000);
      // Each item's last unit price: of its pending event, or read here from its last history entry.
      const { rows: prices } = await client.query<{ id: number; price: string }>(
        'select id::float8 as id, price_at_change::text as price from stock_history where id = any($1::bigint[])',
        [
          ids
            .map(id => states.get(id)!)
            .filter(st => st.lastPrice === null)
            .map(st => st.lastEntryId),
        ],
      );
      const priceOf = new Map(prices.map(r => [r.id, r.price]));
      const { rows } = await client.query<{ item_id: string; q: number | null; price: string | null }>(
        `select i.item_id, r.q, r.price from unnest($1::uuid[]) as i(item_id)
           left join lateral (${latestDayRow('r.closing_quantity as q, r.closing_price::text as price', 'i.item_id', '<= $2::date')}) r on true`,
        [ids, '9999-12-31'],
      );
      for (const row of rows) {
        const state = states.get(row.item_id)!;
        state.lastPrice ??= priceOf.get(state.lastEntryId!) ?? '0';
        const after = state.lastAfter ?? 0;
        const value = after * numericToCents(state.lastPrice);
        const rolled = row.q === null ? null : row.q * numericToCents(row.price!);
        if (row.q !== after || rolled !== value)
          report(
            state,
            row.item_id,
            'value_mismatch',
            `rollup ${row.q ?? 'none'} at ${row.price ?? '-'}, history ${after} at ${state.lastPrice}`,
            [state.lastEntryId],
          );
      }
    }
    await client.query('commit');
    await onProgress(100);
    return {
      checkedItems: states.size,
      checkedEntries,
      pendingItems: skip.size,
      drift: [...states.values()].flatMap(s => [...s.drift.values()]),
    };
  } catch (error) {
    await client.query('rollback').catch(() => (broken = true));
    throw error;
  } finally {
    client.release(broken);
  }
}
