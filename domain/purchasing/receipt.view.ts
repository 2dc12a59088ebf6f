import type { PurchaseReceipt } from './purchase-receipt.entity.js';

/** The Receipt record (a receipt, the receipts). */
export interface ReceiptView {
  id: string;
  purchaseOrderId: string;
  lines: { itemId: string; quantity: number; entryId: string }[];
  note: string | null;
  receivedBy: string;
  receivedAt: string;
}

/** A receipt with its lines loaded -> its view. */
export const toReceiptView = (receipt: PurchaseReceipt): ReceiptView => ({
  id: receipt.id,
  purchaseOrderId: receipt.purchaseOrder.id,
  lines: receipt.lines
    .getItems()
    .map(line => ({ itemId: line.itemId, quantity: line.quantity, entryId: line.entryId })),
  note: receipt.note ?? null,
  receivedBy: receipt.receivedBy,
  receivedAt: receipt.receivedAt.toISOString(),
});
