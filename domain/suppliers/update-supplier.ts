import type { EntityManager } from '@mikro-orm/postgresql';
import { NotFoundError, ValidationError } from '../shared/errors.js';
import { isUuid } from '../shared/sql.js';
import { SUPPLIER_COLUMNS, toSupplierView, type SupplierView } from './supplier.view.js';
import { blankToNull, duplicateSupplier, type SupplierInput } from './create-supplier.js';

/** S4: 400 body id != path id -> 404 -> 409 duplicate name -> updated. */
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
    const exists = await tx.execute('select 1 from supplier where id = ? for update', [id]);
    if (exists.length === 0) throw new NotFoundError('error.not.found.supplier');
    const clash = await tx.execute('select 1 from supplier where lower(name) = lower(?) and id <> ?', [
      input.name,
      id,
    ]);
    if (clash.length > 0) throw duplicateSupplier();
    const rows = await tx.execute<SupplierView[]>(
      `update supplier set name = ?, contact_name = ?, phone = ?, email = ?,
              lead_time_days = case when ?::boolean then ?::integer else lead_time_days end, updated_at = now()
        where id = ? returning ${SUPPLIER_COLUMNS}`,
      [
        input.name,
        blankToNull(input.contactName),
        blankToNull(input.phone),
        blankToNull(input.email),
        input.leadTimeDays !== undefined,
        input.leadTimeDays ?? null,
        id,
      ],
    );
    return toSupplierView(rows[0]);
  });
}
