import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { numericUnits } from './binary-copy.js';
import { toUnits } from '../decimal.js';
import { rollupEvent, type RollupEvent, type RollupFold } from './rollup-fold.js';
import { BinaryCopyReader, readInt8 } from '../../shared/binary-copy-reader.js';

const FIELDS = 13;

/** An event of the snapshot not in the history yet (rebuild_pending), as the scan folds it. */
export interface PendingEvent {
  event_id: string;
  item_id: string;
  item_name: string;
  supplier_id: string | null;
  supplier_name: string | null;
  change: number;
  quantity_after: number;
  reason: string;
  price: string;
  created_by: string;
  /** Days from 2000-01-01. */
  day: number;
  reversal_unit_cost: string | null;
  /** An event that is no reversal with a unit cost of its own (a receipt's). */
  unit_cost: string | null;
}

/**
 * Folds every event of the transaction's snapshot into `fold` in event-id order: the history, read in batches of
 * `batch` entries (keyset pagination on its unique event id, each batch one `COPY … TO STDOUT (FORMAT binary)`
 * of an index range), merged with `pending` (sorted by event id). Rows are decoded straight from COPY's bytes:
 * no row object and no string per entry. `onBatch(events)` after each batch; `pace()` after each piece of a
 * batch (a promise when the fold's output must be waited for, which holds the read back meanwhile).
 */
export async function scanEvents(
  client: pg.Client,
  fold: RollupFold,
  pending: PendingEvent[],
  batch: number,
  onBatch: (events: number) => Promise<void>,
  pace: () => Promise<void> | undefined,
): Promise<void> {
  let next = 0;
  const foldPendingBefore = (eventId: number) => {
    while (next < pending.length && Number(pending[next].event_id) < eventId)
      foldPending(fold, pending[next++], event);
  };
  const field = new Int32Array(FIELDS * 2);
  const event = rollupEvent();
  let lastEventId: number | null = null;
  const reader = new BinaryCopyReader('report rebuild');
  for (;;) {
    const after = lastEventId === null ? '' : `where outbox_event_id > ${lastEventId}`;
    const stream = client.query(
      copyTo(
        `copy (select item_id, outbox_event_id, ("timestamp" at time zone 'UTC')::date, supplier_id, supplier_name,
                      item_name, change, quantity_after, reason, price_at_change, created_by,
                      case when reversal_of is not null then unit_cost end,
                      case when reversal_of is null then unit_cost end
               from stock_history ${after} order by outbox_event_id limit ${batch}) to stdout (format binary)`,
      ),
    );
    let rows = 0;
    const decode = (bytes: Buffer, from: number): number => {
      let at = from;
      while (at + 2 <= bytes.length) {
        const count = bytes.readInt16BE(at);
        if (count === -1) break;
        if (count !== FIELDS) throw new Error('report rebuild: unexpected row layout in binary COPY');
        // Each field's offset and length (-1: null); the row waits for the next piece when it is cut.
        let end = at + 2;
        let whole = true;
        for (let i = 0; i < FIELDS; i++) {
          if (end + 4 > bytes.length) {
            whole = false;
            break;
          }
          const length = bytes.readInt32BE(end);
          field[2 * i] = end + 4;
          field[2 * i + 1] = length;
          end += 4 + (length > 0 ? length : 0);
        }
        if (!whole || end > bytes.length) break;
        const eventId = readInt8(bytes, field[2]);
        foldPendingBefore(eventId);
        const supplierAt = field[6];
        const supplierNameAt = field[8];
        const reversalAt = field[22];
        event.item = fold.items.idAt(bytes, field[0]);
        event.eventId = eventId;
        event.day = bytes.readInt32BE(field[4]);
        event.supplier = field[7] < 0 ? 0 : fold.suppliers.idAt(bytes, supplierAt);
        event.supplierName =
          field[9] < 0 ? -1 : fold.names.idOf(bytes, supplierNameAt, supplierNameAt + field[9]);
        event.itemName = fold.names.idOf(bytes, field[10], field[10] + field[11]);
        event.change = bytes.readInt32BE(field[12]);
        event.quantityAfter = bytes.readInt32BE(field[14]);
        event.reason = fold.reasons.idOf(bytes, field[16], field[16] + field[17]);
        event.price = numericUnits(bytes, field[18]);
        event.reversal = field[23] < 0 ? NaN : numericUnits(bytes, reversalAt);
        event.user = fold.users.idOf(bytes, field[20], field[20] + field[21]);
        event.unitCost = field[25] < 0 ? NaN : numericUnits(bytes, field[24]);
        fold.step(event);
        lastEventId = eventId;
        rows++;
        at = end;
      }
      return at;
    };
    await reader.read(stream as AsyncIterable<Buffer>, decode, pace);
    await onBatch(fold.events);
    if (rows < batch) break;
  }
  while (next < pending.length) foldPending(fold, pending[next++], event);
}

function foldPending(fold: RollupFold, e: PendingEvent, event: RollupEvent): void {
  event.item = fold.items.idOfText(e.item_id);
  event.eventId = Number(e.event_id);
  event.day = Number(e.day);
  event.supplier = e.supplier_id === null ? 0 : fold.suppliers.idOfText(e.supplier_id);
  event.supplierName = e.supplier_name === null ? -1 : fold.names.idOfText(e.supplier_name);
  event.itemName = fold.names.idOfText(e.item_name);
  event.change = Number(e.change);
  event.quantityAfter = Number(e.quantity_after);
  event.reason = fold.reasons.idOfText(e.reason);
  event.price = Number(toUnits(e.price));
  event.reversal = e.reversal_unit_cost === null ? NaN : Number(toUnits(e.reversal_unit_cost));
  event.user = fold.users.idOfText(e.created_by);
  event.unitCost = e.unit_cost === null ? NaN : Number(toUnits(e.unit_cost));
  fold.step(event);
}
