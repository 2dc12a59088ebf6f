import { STOCK_CHANGED, type StockChangedPayload } from './events.js';
import { occurredAtSql, outboxInsertSql, payloadSql, type PayloadSql } from './outbox-insert.js';

/** The payload fields that come from the item row and its supplier (stockChangedPayloadSql). */
type ItemFields = 'itemId' | 'itemName' | 'supplierId' | 'supplierName' | 'minimumQuantity' | 'priceAtChange';

/** The fields of a stock change that do not come from its item row, as SQL expressions. */
export type StockChangeSql = Omit<PayloadSql<StockChangedPayload>, ItemFields | 'occurredAt'> & {
  /** When it happened: a timestamptz expression. */
  at: string;
  /** More payload merged in (a jsonb expression, e.g. a parameter that may be null). */
  extra?: string;
};

/**
 * The `stock.changed` payload (StockChangedPayload) of a change of the item row `item` (inventory_item columns:
 * id, name, supplier_id, minimum_quantity, price as numeric(12, 2)) whose supplier's name is `supplierName`: every writer of a
 * stock event builds it here, so consumers, the rebuild and the integrity check read one format.
 */
export function stockChangedPayloadSql(item: string, supplierName: string, change: StockChangeSql): string {
  const { at, extra, ...fields } = change;
  const payload = payloadSql<StockChangedPayload>({
    itemId: `${item}.id`,
    itemName: `${item}.name`,
    supplierId: `${item}.supplier_id`,
    supplierName,
    minimumQuantity: `${item}.minimum_quantity`,
    priceAtChange: `${item}.price::text`,
    ...fields,
    occurredAt: occurredAtSql(at),
  });
  return extra === undefined ? payload : `${payload} || coalesce(${extra}, '{}'::jsonb)`;
}

/**
 * The CTEs (outboxInsertSql) writing a `stock.changed` event for each row of `from` (`from ...`, naming the item
 * rows `item`), the payload as stockChangedPayloadSql builds it.
 */
export const stockChangedInsertSql = (
  name: string,
  item: string,
  supplierName: string,
  change: StockChangeSql,
  from: string,
): string =>
  outboxInsertSql(name, {
    type: `'${STOCK_CHANGED}'`,
    aggregateId: `${item}.id::text`,
    payload: stockChangedPayloadSql(item, supplierName, change),
    from,
  });
