import { defineEntity, p } from '@mikro-orm/postgresql';

/**
 * One append-only stock-history entry (table `stock_history`; a trigger rejects UPDATE, DELETE and TRUNCATE).
 * `outboxEventId` is unique: consuming the same outbox event twice is a no-op.
 */
export const StockHistoryEntrySchema = defineEntity({
  name: 'StockHistoryEntry',
  tableName: 'stock_history',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    outboxEventId: p.bigint('string').unique('stock_history_event_uq'),
    itemId: p.uuid(),
    itemName: p.string().length(255),
    supplierId: p.uuid().nullable(),
    supplierName: p.string().length(255).nullable(),
    change: p.integer(),
    quantityBefore: p.integer(),
    quantityAfter: p.integer(),
    reason: p.string().length(40),
    priceAtChange: p.decimal('string').precision(12).scale(2),
    createdBy: p.string().length(320),
    timestamp: p.datetime().fieldName('timestamp'),
    correlationId: p.string().length(64).nullable(),
    reversalOf: p.bigint('string').nullable(),
    /** A reversal's booked unit cost, or a receipt's cost per unit (4 decimals). */
    unitCost: p.decimal('string').precision(14).scale(4).nullable(),
    note: p.string().length(500).nullable(),
    /** The purchase order a receipt's entry belongs to (migration Purchasing). */
    purchaseOrderId: p.uuid().nullable(),
    /** The transaction that wrote the entry (migration HistoryWriter): where the history's readers stand. */
    writerXact: p.string().columnType('xid8').nullable().defaultRaw('pg_current_xact_id()'),
  },
});

export class StockHistoryEntry extends StockHistoryEntrySchema.class {}
StockHistoryEntrySchema.setClass(StockHistoryEntry);
