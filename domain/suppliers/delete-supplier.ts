import type { EntityManager } from '@mikro-orm/postgresql';
import { ConflictError, NotFoundError } from '../shared/errors.js';
import { isUuid } from '../shared/sql.js';

/** S5: 404 -> 409 while items or purchase orders reference it (the RESTRICT foreign key closes the race) -> deleted. */
export async function deleteSupplier(em: EntityManager, id: string): Promise<void> {
  if (!isUuid(id)) throw new NotFoundError('error.not.found.supplier');
  await em.transactional(async tx => {
    const exists = await tx.execute('select 1 from supplier where id = ? for update', [id]);
    if (exists.length === 0) throw new NotFoundError('error.not.found.supplier');
    const used = await tx.execute('select 1 from inventory_item where supplier_id = ? limit 1', [id]);
    if (used.length > 0) throw new ConflictError('inventory.supplier.in.use');
    const ordered = await tx.execute('select 1 from purchase_order where supplier_id = ? limit 1', [id]);
    if (ordered.length > 0) throw new ConflictError('purchase.supplier.has.orders');
    await tx.execute('delete from supplier where id = ?', [id]);
  });
}
