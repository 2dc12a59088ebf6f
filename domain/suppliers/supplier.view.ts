import { isoSql } from '../shared/sql.js';

/** The Supplier record of the contract. */
export interface SupplierView {
  id: string;
  name: string;
  contactName: string | null;
  phone: string | null;
  email: string | null;
  /** 0..365, null = REPLENISHMENT_DEFAULT_LEAD_DAYS. */
  leadTimeDays: number | null;
  createdBy: string;
  createdAt: string;
}

export const SUPPLIER_COLUMNS = `id, name, contact_name as "contactName", phone, email, lead_time_days as "leadTimeDays",
  created_by as "createdBy",
  ${isoSql('created_at')} as "createdAt"`;

/** A row of SUPPLIER_COLUMNS (createdAt already ISO) or a Supplier entity. */
export type SupplierSource = Pick<SupplierView, 'id' | 'name' | 'createdBy'> & {
  contactName?: string | null;
  phone?: string | null;
  email?: string | null;
  leadTimeDays?: number | null;
  createdAt: string | Date;
};

export const toSupplierView = (row: SupplierSource): SupplierView => ({
  id: row.id,
  name: row.name,
  contactName: row.contactName ?? null,
  phone: row.phone ?? null,
  email: row.email ?? null,
  leadTimeDays: row.leadTimeDays ?? null,
  createdBy: row.createdBy,
  createdAt: typeof row.createdAt === 'string' ? row.createdAt : row.createdAt.toISOString(),
});
