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

export const toSupplierView = (row: SupplierView): SupplierView => ({
  id: row.id,
  name: row.name,
  contactName: row.contactName,
  phone: row.phone,
  email: row.email,
  leadTimeDays: row.leadTimeDays,
  createdBy: row.createdBy,
  createdAt: row.createdAt,
});
