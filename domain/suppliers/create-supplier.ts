import type { EntityManager } from '@mikro-orm/postgresql';
import { DuplicateResourceError, ValidationError } from '../shared/errors.js';
import type { WriteContext } from '../shared/write-context.js';
import { SUPPLIER_COLUMNS, toSupplierView, type SupplierView } from './supplier.view.js';

export interface SupplierInput {
  id?: unknown;
  name: string;
  contactName?: string | null;
  phone?: string | null;
  email?: string | null;
  /** Absent on update: keep the stored value. */
  leadTimeDays?: number | null;
}

export const blankToNull = (value: string | null | undefined): string | null => (value ? value : null);

export const duplicateSupplier = () => new DuplicateResourceError('inventory.supplier.duplicate');

/** S2: 400 id present -> 409 duplicate name (case-insensitive; the unique index closes the race). */
export async function createSupplier(
  em: EntityManager,
  input: SupplierInput,
  context: WriteContext,
): Promise<SupplierView> {
  if (input.id !== undefined && input.id !== null)
    throw new ValidationError('error.id.not.allowed', {
      fieldErrors: [{ field: 'id', messageKey: 'error.id.not.allowed' }],
    });
  const clash = await em.execute('select 1 from supplier where lower(name) = lower(?)', [input.name]);
  if (clash.length > 0) throw duplicateSupplier();
  const rows = await em.execute<SupplierView[]>(
    `insert into supplier (name, contact_name, phone, email, lead_time_days, created_by) values (?, ?, ?, ?, ?, ?)
     returning ${SUPPLIER_COLUMNS}`,
    [
      input.name,
      blankToNull(input.contactName),
      blankToNull(input.phone),
      blankToNull(input.email),
      input.leadTimeDays ?? null,
      context.user,
    ],
  );
  return toSupplierView(rows[0]);
}
