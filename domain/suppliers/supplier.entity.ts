import { defineEntity, p } from '@mikro-orm/postgresql';
import { statementTime } from '../shared/database-time.js';

/** A supplier (table `supplier`, Migration20261122030000Inventory). Names are unique case-insensitively. */
export const SupplierSchema = defineEntity({
  name: 'Supplier',
  tableName: 'supplier',
  properties: {
    id: p.uuid().primary().defaultRaw('gen_random_uuid()'),
    name: p.string().length(255),
    contactName: p.string().length(255).nullable(),
    phone: p.string().length(50).nullable(),
    email: p.string().length(320).nullable(),
    /** 0..365 days, null = REPLENISHMENT_DEFAULT_LEAD_DAYS (migration Purchasing). */
    leadTimeDays: p.integer().nullable(),
    createdBy: p.string().length(320),
    /** Stamped by PostgreSQL's clock (statementTime), as every other entity's. */
    createdAt: p.datetime().defaultRaw('now()').onCreate(statementTime),
    updatedAt: p.datetime().defaultRaw('now()').onCreate(statementTime).onUpdate(statementTime),
  },
});

export class Supplier extends SupplierSchema.class {}
SupplierSchema.setClass(Supplier);
