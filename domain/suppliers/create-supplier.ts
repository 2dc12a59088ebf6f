import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { lowerEquals } from '../shared/lower-equals.js';
import { DuplicateResourceError, ValidationError } from '../shared/errors.js';
import type { WriteContext } from '../shared/write-context.js';
import { Supplier } from './supplier.entity.js';
import { toSupplierView, type SupplierView } from './supplier.view.js';

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

/** The suppliers named `name`, case-insensitively as the unique index `supplier_name_uq` compares them. */
export const namedLike = (name: string) => lowerEquals('name', name);

/** The fields of the input a supplier takes (blank texts stored as null). */
export const supplierFields = (input: SupplierInput) => ({
  name: input.name,
  contactName: blankToNull(input.contactName),
  phone: blankToNull(input.phone),
  email: blankToNull(input.email),
});

/** Supplier creation: 400 id present -> 409 duplicate name (case-insensitive; the unique index closes the race). */
export async function createSupplier(
  em: EntityManager,
  input: SupplierInput,
  context: WriteContext,
): Promise<SupplierView> {
  if (input.id !== undefined && input.id !== null)
    throw new ValidationError('error.id.not.allowed', {
      fieldErrors: [{ field: 'id', messageKey: 'error.id.not.allowed' }],
    });
  return em.transactional(async tx => {
    if ((await tx.count(Supplier, namedLike(input.name))) > 0) throw duplicateSupplier();
    const supplier = tx.create(Supplier, {
      id: randomUUID(),
      ...supplierFields(input),
      leadTimeDays: input.leadTimeDays ?? null,
      createdBy: context.user,
    });
    await tx.flush();
    return toSupplierView(supplier);
  });
}
