import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { NotFoundError, ValidationError } from '../shared/errors.js';
import { isUuid } from '../shared/sql.js';
import { Supplier } from './supplier.entity.js';
import { statementTime } from '../shared/database-time.js';
import { toSupplierView, type SupplierView } from './supplier.view.js';
import { duplicateSupplier, namedLike, supplierFields, type SupplierInput } from './create-supplier.js';

/** The supplier update: 400 body id != path id -> 404 -> 409 duplicate name -> updated (an absent leadTimeDays is kept). */
export async function updateSupplier(
  em: EntityManager,
  id: string,
  input: SupplierInput,
): Promise<SupplierView> {
  if (input.id !== undefined && input.id !== null && input.id !== id)
    throw new ValidationError('error.id.mismatch', {
      fieldErrors: [{ field: 'id', messageKey: 'error.id.mismatch' }],
    });
  if (!isUuid(id)) throw new NotFoundError('error.not.found.supplier');
  return em.transactional(async tx => {
    const supplier = await tx.findOne(Supplier, id, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!supplier) throw new NotFoundError('error.not.found.supplier');
    if ((await tx.count(Supplier, { ...namedLike(input.name), id: { $ne: id } })) > 0)
      throw duplicateSupplier();
    tx.assign(supplier, {
      ...supplierFields(input),
      ...(input.leadTimeDays !== undefined ? { leadTimeDays: input.leadTimeDays } : {}),
      updatedAt: statementTime(),
    });
    await tx.flush();
    return toSupplierView(supplier);
  });
}
