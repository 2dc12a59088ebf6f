import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import type { ItemStates } from './item-states.js';
import { BinaryCopyReader, readInt8 } from '../shared/binary-copy-reader.js';

/** Column widths of a row of the scan: item_id, id, outbox_event_id, change, quantity_before, quantity_after. */
const WIDTHS = [16, 8, 8, 4, 4, 4];
/** A row's bytes: its field count, then each field's length and value (the columns are all NOT NULL). */
const ROW = 2 + WIDTHS.reduce((sum, width) => sum + 4 + width, 0);

function checkRow(bytes: Buffer, offset: number): void {
  let fine = bytes.readInt16BE(offset) === WIDTHS.length;
  for (let i = 0, at = offset + 2; fine && i < WIDTHS.length; at += 4 + WIDTHS[i++])
    fine = bytes.readInt32BE(at) === WIDTHS[i];
  if (!fine) throw new Error('stock history scan: unexpected row layout in binary COPY');
}

/**
 * Reads the whole history in event order into `states`, in batches of `batch` entries (keyset pagination on the
 * unique event id: each batch is one `COPY … TO STDOUT (FORMAT binary)` of an index range), on a connection whose
 * transaction holds the snapshot. Rows are decoded straight from COPY's bytes, without a row object or a string
 * per entry (a uuid becomes a string once per item), so the scan's allocation is per chunk of the stream, not per
 * entry. Returns the number of entries read; `onBatch(entries)` after each batch.
 */
export async function scanHistory(
  client: pg.PoolClient,
  states: ItemStates,
  batch: number,
  onBatch: (entries: number) => Promise<void>,
): Promise<number> {
  let entries = 0;
  let lastEventId: number | null = null;
  const reader = new BinaryCopyReader('stock history scan');
  for (;;) {
    const after = lastEventId === null ? '' : `where outbox_event_id > ${lastEventId}`;
    const stream = client.query(
      copyTo(
        `copy (select item_id, id, outbox_event_id, change, quantity_before, quantity_after from stock_history
          ${after} order by outbox_event_id limit ${batch}) to stdout (format binary)`,
      ),
    );
    let rows = 0;
    await reader.read(stream as AsyncIterable<Buffer>, (bytes, from) => {
      let at = from;
      for (; at + ROW <= bytes.length; at += ROW) {
        if (bytes.readInt16BE(at) === -1) break;
        checkRow(bytes, at);
        states.step(
          states.slotAt(bytes, at + 6),
          readInt8(bytes, at + 26),
          bytes.readInt32BE(at + 50),
          bytes.readInt32BE(at + 58),
          bytes.readInt32BE(at + 66),
          null,
        );
        lastEventId = readInt8(bytes, at + 38);
        rows++;
      }
      return at;
    });
    entries += rows;
    await onBatch(entries);
    if (rows < batch) return entries;
  }
}
