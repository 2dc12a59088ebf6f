import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { ConflictError, NotFoundError } from '../shared/errors.js';
import { isUuid } from '../shared/sql.js';
import { Supplier } from './supplier.entity.js';

/** Supplier deletion: 404 -> 409 while items or purchase orders reference it (the RESTRICT foreign key closes the race) -> deleted. */
export async function deleteSupplier(em: EntityManager, id: string): Promise<void> {
  if (!isUuid(id)) throw new NotFoundError('error.not.found.supplier');
  await em.transactional(async tx => {
    const supplier = await tx.findOne(Supplier, id, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!supplier) throw new NotFoundError('error.not.found.supplier');
    // Items and orders are modules above this one: asked by their tables, not their entities.
    const used = await tx.execute('select 1 from inventory_item where supplier_id = ? limit 1', [id]);
    if (used.length > 0) throw new ConflictError('inventory.supplier.in.use');
    const ordered = await tx.execute('select 1 from purchase_order where supplier_id = ? limit 1', [id]);
    if (ordered.length > 0) throw new ConflictError('purchase.supplier.has.orders');
    tx.remove(supplier);
    await tx.flush();
  });
}
