import { expect } from 'chai';
import type { Services } from '../../config/services.js';

interface HistoryRow {
  outbox_event_id: string;
  change: number;
  quantity_before: number;
  quantity_after: number;
}

/**
 * History rows of an item ordered by outbox id, asserting that the resulting-quantity chain has no break
 * (each entry starts where the previous one ended). Outbox ids of one item are in row-lock order, because
 * the event is inserted while the guarded update holds the row lock.
 */
export async function assertChain(services: Services, itemId: string): Promise<HistoryRow[]> {
  const rows = await services.orm.em
    .fork()
    .execute<HistoryRow[]>(
      'select outbox_event_id, change, quantity_before, quantity_after from stock_history where item_id = ? order by outbox_event_id',
      [itemId],
    );
  for (let i = 1; i < rows.length; i++)
    expect(rows[i].quantity_before, `chain break at event ${rows[i].outbox_event_id}`).to.equal(
      rows[i - 1].quantity_after,
    );
  for (const row of rows) expect(row.quantity_before + row.change).to.equal(row.quantity_after);
  return rows;
}
