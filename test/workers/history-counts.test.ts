import { expect } from 'chai';
import type { EntityManager } from '@mikro-orm/postgresql';
import { testApp } from '../setup/hooks.js';
import { createItem, createSupplier, recordStockChange } from '../support/stock-events.js';
import { STOCK_HISTORY_CONSUMER } from '../../domain/outbox/consumers.js';
import { drainConsumer } from '../../domain/outbox/drain-consumer.js';
import {
  recordStockChanges,
  recordStockChangesAlone,
} from '../../domain/stock-history/record-stock-changes.js';

const NO_SUPPLIER = '00000000-0000-0000-0000-000000000000';
const MONTH = `date_trunc('month', "timestamp" at time zone 'UTC')::date`;

/**
 * Each count table against a count of the history itself, in ONE statement (one snapshot): the rows that differ.
 * The counts are written in the statement that appends entries, so they agree in any snapshot, whatever else
 * runs meanwhile.
 */
const MISMATCHES = `
with h as (select *, coalesce(supplier_id, '${NO_SUPPLIER}') as supplier_key from stock_history),
recount as (
  select 'day' as t, ("timestamp" at time zone 'UTC')::date::text || supplier_key || reason as k, count(*) as n
    from h group by 2
  union all
  select 'month', ${MONTH}::text || supplier_key || reason, count(*) from h group by 2
  union all
  select 'item', item_id::text || ${MONTH} || supplier_key || item_name, count(*) from h group by 2
  union all
  select 'hour', date_trunc('hour', "timestamp" at time zone 'UTC')::text, count(*) from h group by 2
  union all
  select 'name', item_id::text || item_name, 1 from h group by 2),
counted as (
  select 'day' as t, day::text || supplier_key || reason as k, entries as n from history_count_day
  union all
  select 'month', month::text || supplier_key || reason, entries from history_count_month
  union all
  select 'item', item_id::text || month || supplier_key || item_name, entries from history_count_item
  union all
  select 'hour', hour::text, entries from history_count_hour
  union all
  select 'name', item_id::text || item_name, 1 from history_item_name)
select coalesce(r.t, c.t) as t, coalesce(r.k, c.k) as k, r.n as history, c.n as counted
  from recount r full join counted c on c.t = r.t and c.k = r.k
 where r.n is distinct from c.n`;

const drainHistory = (em: EntityManager) =>
  drainConsumer(em, STOCK_HISTORY_CONSUMER, recordStockChanges, { oneStatement: recordStockChangesAlone });

describe('History count rows', () => {
  it('When the consumer and a plain insert append entries over several hours, days and months, then every count row equals a count of the history', async () => {
    const em = testApp().services.orm.em.fork();
    const supplier = await createSupplier(em);
    const items = [
      await createItem(em, { supplierId: supplier.id }),
      await createItem(em, { supplierId: supplier.id }),
    ];
    const times = ['2026-01-31T23:30:00.000Z', '2026-02-01T00:10:00.000Z', '2026-02-01T01:10:00.000Z'];
    for (const [i, at] of times.entries())
      for (const item of items) {
        await recordStockChange(em, {
          itemId: item.id,
          change: 5,
          reason: 'RESTOCK',
          at: new Date(at),
          withHistory: false,
        });
        await recordStockChange(em, {
          itemId: item.id,
          change: -1 - i,
          reason: i % 2 === 0 ? 'SALE' : 'DAMAGED',
          at: new Date(at),
          withHistory: false,
        });
      }
    await drainHistory(em);
    // A fill in SQL, several entries in one statement (one of them without a supplier).
    await em.execute(
      `insert into stock_history (outbox_event_id, item_id, item_name, supplier_id, supplier_name, change,
         quantity_before, quantity_after, reason, price_at_change, created_by, "timestamp")
       select -g - (extract(epoch from clock_timestamp()) * 1000)::bigint * 10, ?::uuid, 'Filled in', case when g = 1 then null else ?::uuid end, null, 1, 0, 1,
              'RESTOCK', 1, 'factory', timestamptz '2026-03-02T10:00:00Z' + g * interval '50 minutes'
         from generate_series(1, 3) g`,
      [items[0].id, supplier.id],
    );

    const mismatches = await em.execute(MISMATCHES);

    expect(mismatches).to.deep.equal([]);
  });
});
