import type { EntityManager } from '@mikro-orm/postgresql';
import { STOCK_CHANGED } from '../outbox/events.js';
import { ANALYTICS_CONSUMER, STOCK_HISTORY_CONSUMER } from '../outbox/consumers.js';
import { pendingForSql } from '../outbox/pending-events.js';
import { foldItemEvents, NO_SUPPLIER, type FoldEvent } from './fold-item-events.js';
import { lockRebuildExclusive } from './locks.js';
import { DAY_NAMES, writeRollups } from './write-rollups.js';
import { CUM_ENTRIES_WINDOW, deriveActivityRollups } from './activity-rollups.js';
import { executeNative, nativeSql } from './native-sql.js';

export interface RebuildResult {
  items: number;
  events: number;
  durationMs: number;
}

/** Items per batch (each batch is one read of their events, folded and written in chunks). */
const ITEMS_PER_BATCH = 50;

/**
 * Recomputes every analytics rollup from the stock history, in one transaction that holds the rebuild lock
 * exclusively (the analytics consumer waits meanwhile; writes go on). The source is one snapshot of every
 * committed event: the history plus the `stock.changed` events whose history entry is not written yet. Events
 * committed later stay pending and are folded by the consumer afterwards; for one item they are always newer
 * than everything in the snapshot, so the fold order holds. Readers see the old rollups until the commit.
 */
export async function rebuildRollups(
  em: EntityManager,
  onProgress: (percent: number) => Promise<void> = async () => undefined,
): Promise<RebuildResult> {
  const started = Date.now();
  return em.transactional(async tx => {
    // A full rebuild is a long transaction by design: lift the per-statement timeout for it only.
    await tx.execute('set local statement_timeout = 0');
    // It also waits as long as it takes for the consumers' shared hold of the rebuild lock.
    await tx.execute('set local lock_timeout = 0');
    await lockRebuildExclusive(tx);
    await tx.execute(`
      create temp table rebuild_source on commit drop as
      select outbox_event_id as event_id, item_id, item_name, supplier_id, supplier_name, change, quantity_after,
             reason, price_at_change::text as price, created_by,
             to_char("timestamp" at time zone 'UTC', 'YYYY-MM-DD') as day,
             case when reversal_of is not null then unit_cost::text end as reversal_unit_cost
      from stock_history
      union all
      select o.id, (o.payload->>'itemId')::uuid, o.payload->>'itemName', (o.payload->>'supplierId')::uuid,
             o.payload->>'supplierName', (o.payload->>'change')::int, (o.payload->>'quantityAfter')::int,
             o.payload->>'reason', o.payload->>'priceAtChange', o.payload->>'createdBy',
             to_char((o.payload->>'occurredAt')::timestamptz at time zone 'UTC', 'YYYY-MM-DD'),
             case when o.payload ? 'reversalOf' then o.payload->>'unitCost' end
      from outbox_event o
      where o.type = '${STOCK_CHANGED}' and ${pendingForSql([STOCK_HISTORY_CONSUMER], 'o')}
        and not exists (select 1 from stock_history h where h.outbox_event_id = o.id)`);
    await tx.execute('create index on rebuild_source (item_id, event_id)');
    await tx.execute('analyze rebuild_source');
    for (const table of [
      'analytics_item_day',
      'analytics_reason_day',
      'analytics_user_day',
      'analytics_item',
      'analytics_item_supplier',
      'analytics_supplier_day',
      'analytics_supplier_month',
    ])
      await tx.execute(`delete from ${table}`);

    // Day rows are staged unindexed and copied in day order at the end: range scans by day then touch
    // contiguous pages (the consumer appends in time order anyway).
    await tx.execute(
      'create temp table rebuild_item_day on commit drop as select * from analytics_item_day with no data',
    );
    const [{ items }] = await tx.execute<{ items: string }[]>(
      'select count(distinct item_id) as items from rebuild_source',
    );
    const totalItems = Number(items);
    let done = 0;
    let events = 0;
    let after = '00000000-0000-0000-0000-000000000000';
    await onProgress(0);
    for (;;) {
      const batch = await tx.execute<{ item_id: string }[]>(
        'select distinct item_id from rebuild_source where item_id > ? order by item_id limit ?',
        [after, ITEMS_PER_BATCH],
      );
      if (batch.length === 0) break;
      after = batch[batch.length - 1].item_id;
      const rows = await executeNative<any>(
        tx,
        `select event_id, item_id, item_name, supplier_id, supplier_name, change, quantity_after, reason, price,
                created_by, day, reversal_unit_cost
         from rebuild_source where item_id >= $1 and item_id <= $2 order by item_id, event_id`,
        [batch[0].item_id, after],
      );
      const byItem = new Map<string, FoldEvent[]>();
      for (const r of rows) {
        const list = byItem.get(r.item_id) ?? [];
        list.push({
          eventId: String(r.event_id),
          itemId: r.item_id,
          itemName: r.item_name,
          supplierId: r.supplier_id,
          supplierName: r.supplier_name,
          day: r.day,
          change: Number(r.change),
          quantityAfter: Number(r.quantity_after),
          reason: r.reason,
          priceAtChange: String(r.price),
          createdBy: r.created_by,
          ...(r.reversal_unit_cost === null ? {} : { reversalUnitCost: String(r.reversal_unit_cost) }),
        });
        byItem.set(r.item_id, list);
      }
      const folds = [...byItem.values()].map(list => foldItemEvents({ q: 0, c: 0n, lastEventId: '0' }, list));
      await writeRollups(nativeSql(tx), folds, { dayTable: 'rebuild_item_day' });
      done += batch.length;
      events += rows.length;
      await onProgress(Math.min(99, Math.floor((done / Math.max(1, totalItems)) * 100)));
    }
    await tx.execute(
      `insert into analytics_item_day (${DAY_NAMES.join(', ')}, cum_entries)
       select ${DAY_NAMES.join(', ')}, ${CUM_ENTRIES_WINDOW}
       from rebuild_item_day order by day, item_id, supplier_key`,
    );
    await deriveActivityRollups(tx);
    await tx.execute(`
      insert into analytics_reason_day (item_id, day, supplier_key, reason, item_name, entries, increase, decrease)
      select item_id, day::date, coalesce(supplier_id, '${NO_SUPPLIER}'), reason,
             (array_agg(item_name order by event_id desc))[1], count(*),
             sum(greatest(change, 0)), sum(greatest(-change, 0))
      from rebuild_source group by 1, 2, 3, 4 order by 2, 1`);
    await tx.execute(`
      insert into analytics_user_day (day, supplier_key, created_by, entries)
      select day::date, coalesce(supplier_id, '${NO_SUPPLIER}'), created_by, count(*)
      from rebuild_source group by 1, 2, 3 order by 1`);
    await tx.execute(
      `update outbox_pending set done_at = now()
       where consumer = ${ANALYTICS_CONSUMER.code} and done_at is null and id in (select event_id from rebuild_source)`,
    );
    await onProgress(100);
    return { items: done, events, durationMs: Date.now() - started };
  });
}
