import type { EntityManager } from '@mikro-orm/postgresql';
import { STOCK_CHANGED, type StockChangedPayload } from '../outbox/events.js';
import { hasPendingEvents, markEventsDone, pendingEvent, pendingEvents } from '../outbox/pending-events.js';
import { toUnits } from './decimal.js';
import { foldItemEvents, type FoldEvent, type FoldResult } from './fold-item-events.js';
import { lockAnalyticsFold, lockRebuildShared } from './locks.js';
import { writeRollups } from './write-rollups.js';
import { executeNative } from './native-sql.js';

/** Events per fold transaction (an item's events may be split across batches; they stay in id order). */
const FOLD_BATCH = 1000;

export const payloadToFoldEvent = (id: string, p: StockChangedPayload): FoldEvent => ({
  eventId: id,
  itemId: p.itemId,
  itemName: p.itemName,
  supplierId: p.supplierId,
  supplierName: p.supplierName,
  day: new Date(p.occurredAt).toISOString().slice(0, 10),
  change: p.change,
  quantityAfter: p.quantityAfter,
  reason: p.reason,
  priceAtChange: p.priceAtChange,
  createdBy: p.createdBy,
});

/**
 * The analytics consumer. Folds EVERY pending event - the job's and whatever else is pending - in batches of at
 * most `batchSize` in id order, each batch in one transaction that also sets `analytics_done_at`. Folds are
 * single-flight (an advisory lock): every fold writes rows shared by many items (per user and supplier), so one
 * transaction per batch is far cheaper than many small ones queueing on each other's row locks, and an item's
 * events always fold in id order (for one item, the write path's row lock makes ids follow commit order). A job
 * whose event an earlier batch already folded still folds whatever else is pending, so an event waits for the
 * next job to run, not for its own job to come up in the queue. Returns how many events it folded.
 */
export async function foldStockEvent(
  em: EntityManager,
  eventId: string,
  options: { batchSize?: number; onBatchError?: (error: unknown) => void } = {},
): Promise<number> {
  const batchSize = options.batchSize ?? FOLD_BATCH;
  // One look-up on the common path: the job's own event, if still pending, is among the pending ones.
  if (!(await hasPendingEvents(em, 'analytics'))) return 0;
  let folded = 0;
  try {
    for (;;) {
      const n = await em.transactional(tx => foldPendingBatch(tx, batchSize));
      folded += n;
      if (n < batchSize) return folded;
    }
  } catch (error) {
    options.onBatchError?.(error);
    // The bad event's own job reports it (below); this job's event was folded already.
    const event = await pendingEvent(em, 'analytics', eventId);
    if (!event) return folded;
    // One event that cannot be folded must not stall every item: fold this job's item alone (its events
    // still in id order). If the bad event is this item's, this throws too and the job is retried, visibly.
    return folded + (await em.transactional(tx => foldPendingBatch(tx, batchSize, event.aggregateId)));
  }
}

async function foldPendingBatch(tx: EntityManager, batchSize: number, aggregateId?: string): Promise<number> {
  await lockRebuildShared(tx);
  await lockAnalyticsFold(tx);
  const events = await pendingEvents(tx, 'analytics', batchSize, aggregateId);
  if (events.length === 0) return 0;
  const byItem = new Map<string, FoldEvent[]>();
  for (const e of events) {
    if (e.type !== STOCK_CHANGED) continue;
    const list = byItem.get(e.payload.itemId) ?? [];
    list.push(payloadToFoldEvent(e.id, e.payload));
    byItem.set(e.payload.itemId, list);
  }
  const states = await executeNative<{
    item_id: string;
    wac_q: number;
    wac_c: string;
    last_event_id: string;
  }>(
    tx,
    `select item_id, wac_q, wac_c::text, last_event_id::text from analytics_item
     where item_id in (select jsonb_array_elements_text($1::jsonb)::uuid)`,
    [JSON.stringify([...byItem.keys()])],
  );
  const start = new Map(states.map(s => [s.item_id, s]));
  const folds: FoldResult[] = [...byItem].map(([itemId, list]) => {
    const s = start.get(itemId);
    return foldItemEvents(
      s
        ? { q: s.wac_q, c: toUnits(s.wac_c), lastEventId: s.last_event_id }
        : { q: 0, c: 0n, lastEventId: '0' },
      list,
    );
  });
  await writeRollups(tx, folds);
  await markEventsDone(
    tx,
    'analytics',
    events.map(e => e.id),
  );
  return events.length;
}
