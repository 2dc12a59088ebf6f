import type { EntityManager } from '@mikro-orm/postgresql';
import { STOCK_CHANGED, type StockChangedPayload } from '../outbox/events.js';
import { ANALYTICS_CONSUMER, STOCK_HISTORY_CONSUMER } from '../outbox/consumers.js';
import { pendingForSql } from '../outbox/pending-events.js';
import { nativePool } from '../shared/native-transaction.js';
import { numericToCents } from '../shared/money.js';
import { latestDayRow } from '../analytics/queries/latest-day-row.js';
import { ItemStates } from './item-states.js';
import { scanHistory } from './scan-history.js';
import { onOrderDrift } from './on-order-drift.js';
import type { Drift } from './drift.js';

export interface IntegrityResult {
  checkedItems: number;
  checkedEntries: number;
  pendingItems: number;
  drift: Drift[];
}

/**
 * Entries per batch of the scan (one COPY of an index range each): the granularity of progress. Memory does not
 * follow it: a batch is decoded as it streams in.
 */
const BATCH = 100_000;

/**
 * The integrity check (contract, "Integrity"): within ONE snapshot (a repeatable-read, read-only transaction),
 * each item's history in event order plus its events still pending for the history consumer is compared with the
 * item (quantity_mismatch), with itself (chain_break, negative_quantity) and with its latest daily rollup
 * (value_mismatch; items with events pending for the analytics consumer are counted in `pendingItems` and not
 * judged). The history is read in batches of binary COPY decoded as it streams (scan-history.ts), so memory follows
 * the number of items, not entries.
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
    const states = new ItemStates();
    const checkedEntries = await scanHistory(client, states, BATCH, entries =>
      onProgress(Math.min(90, Math.floor((entries / total) * 90))),
    );
    const { rows: pending } = await client.query<{ payload: StockChangedPayload }>(
      `select o.payload from outbox_event o
        where o.type = '${STOCK_CHANGED}' and ${pendingForSql([STOCK_HISTORY_CONSUMER], 'o')}
          and not exists (select 1 from stock_history h where h.outbox_event_id = o.id)
        order by o.id`,
    );
    for (const { payload: p } of pending)
      states.step(states.slotOf(p.itemId), NaN, p.change, p.quantityBefore, p.quantityAfter, p.priceAtChange);
    const { rows: items } = await client.query<{ id: string; quantity: number }>(
      'select id, quantity from inventory_item',
    );
    for (const item of items) {
      const found = states.find(item.id);
      const sum = found < 0 ? 0 : states.sum(found);
      if (sum !== item.quantity) {
        const slot = found < 0 ? states.slotOf(item.id) : found;
        states.report(slot, 'quantity_mismatch', `item quantity ${item.quantity}, history sum ${sum}`, [
          states.lastEntryId(slot),
        ]);
      }
    }
    const { rows: analyticsPending } = await client.query<{ item_id: string }>(
      `select distinct e.aggregate_id as item_id from outbox_pending x join outbox_event e on e.id = x.id
        where x.consumer = ${ANALYTICS_CONSUMER.code} and x.done_at is null and e.type = '${STOCK_CHANGED}'`,
    );
    const skip = new Set(analyticsPending.map(r => r.item_id));
    const judged: number[] = [];
    for (let slot = 0; slot < states.size; slot++)
      if (!skip.has(states.itemId(slot)) && states.lastAfter(slot) !== null) judged.push(slot);
    for (let i = 0; i < judged.length; i += 1000) {
      const slots = judged.slice(i, i + 1000);
      // Each item's last unit price: of its pending event, or read here from its last history entry.
      const { rows: prices } = await client.query<{ id: number; price: string }>(
        'select id::float8 as id, price_at_change::text as price from stock_history where id = any($1::bigint[])',
        [slots.filter(slot => states.lastPrice[slot] === null).map(slot => states.lastEntryId(slot))],
      );
      const priceOf = new Map(prices.map(r => [r.id, r.price]));
      const { rows } = await client.query<{ i: number; q: number | null; price: string | null }>(
        `select i.i, r.q, r.price from unnest($1::uuid[]) with ordinality as i(item_id, i)
           left join lateral (${latestDayRow('r.closing_quantity as q, r.closing_price::text as price', 'i.item_id', '<= $2::date')}) r on true`,
        [slots.map(slot => states.itemId(slot)), '9999-12-31'],
      );
      for (const row of rows) {
        const slot = slots[Number(row.i) - 1];
        const price = states.lastPrice[slot] ?? priceOf.get(states.lastEntryId(slot)!) ?? '0';
        const after = states.lastAfter(slot) ?? 0;
        const value = after * numericToCents(price);
        const rolled = row.q === null ? null : row.q * numericToCents(row.price!);
        if (row.q !== after || rolled !== value)
          states.report(
            slot,
            'value_mismatch',
            `rollup ${row.q ?? 'none'} at ${row.price ?? '-'}, history ${after} at ${price}`,
            [states.lastEntryId(slot)],
          );
      }
    }
    const onOrder = await onOrderDrift(client);
    await client.query('commit');
    await onProgress(100);
    return {
      checkedItems: states.size,
      checkedEntries,
      pendingItems: skip.size,
      drift: [...states.drift(), ...onOrder],
    };
  } catch (error) {
    // A failure may come in the middle of a COPY: the connection is closed (its transaction with it), never reused.
    broken = true;
    throw error;
  } finally {
    client.release(broken);
  }
}
