import type { EntityManager } from '@mikro-orm/postgresql';
import type { ReplenishmentSettings } from '../../config/env.js';
import type { WriteContext } from '../shared/write-context.js';
import { isUuid } from '../shared/sql.js';
import { createPurchaseOrder } from '../purchasing/create-purchase-order.js';
import type { PurchaseOrderView } from '../purchasing/purchase-order.view.js';
import { supplierNotFound } from '../purchasing/order-lines.js';
import { REPLENISHMENT_LOCK_NS } from './compute-replenishment.js';
import { splitDraftOrders } from './split-draft-orders.js';
import { orderableSuggestions, suppliersToOrderFrom, utcToday } from './suggestion-queries.js';

/**
 * The draft orders from suggestions: DRAFT orders from today's suggestions, one per supplier, 500 lines and the `totalCost` cap
 * (split-draft-orders.ts; unit cost = the item's price),
 * leaving out every item already on an open order. Each supplier's orders are written in one transaction that
 * first takes that supplier's advisory lock (key 1 + the supplier's hash): a second call for the supplier waits,
 * then reads the first one's lines as open and leaves their items out, so an item never lands on two open
 * orders. `supplierId` unknown -> 404.
 */
export async function createDraftOrders(
  em: EntityManager,
  settings: ReplenishmentSettings,
  supplierId: string | undefined,
  context: WriteContext,
): Promise<PurchaseOrderView[]> {
  const today = utcToday();
  if (supplierId !== undefined) await mustExist(em, supplierId);
  const suppliers = supplierId !== undefined ? [supplierId] : await suppliersToOrderFrom(em, settings, today);
  const orders: PurchaseOrderView[] = [];
  for (const id of suppliers)
    orders.push(
      ...(await em.transactional(async tx => {
        await tx.execute('select pg_advisory_xact_lock(?, hashtext(?))', [REPLENISHMENT_LOCK_NS + 1, id]);
        const lines = await orderableSuggestions(tx, settings, id, today);
        const created: PurchaseOrderView[] = [];
        for (const chunk of splitDraftOrders(lines))
          created.push(
            await createPurchaseOrder(
              tx,
              {
                supplierId: id,
                lines: chunk.map(l => ({ itemId: l.itemId, quantity: l.suggestedQuantity })),
              },
              context,
            ),
          );
        return created;
      })),
    );
  return orders;
}

async function mustExist(em: EntityManager, supplierId: string): Promise<void> {
  const rows = isUuid(supplierId)
    ? await em.execute('select 1 from supplier where id = ?', [supplierId])
    : [];
  if (rows.length === 0) throw supplierNotFound();
}
