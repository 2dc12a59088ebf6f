import type { EntityManager } from '@mikro-orm/postgresql';
import { itemUpdateFrequency, type ItemUpdateCount } from './item-update-frequency.js';
import { lowStockItems, type LowStockItem } from './low-stock-items.js';
import { monthlyStockMovement, type MonthlyMovement } from './monthly-stock-movement.js';
import { stockPerSupplier, type SupplierStock } from './stock-per-supplier.js';

export interface DashboardSummary {
  stockPerSupplier: SupplierStock[];
  lowStockItems: LowStockItem[];
  monthlyStockMovement: MonthlyMovement[];
  topUpdatedItems: ItemUpdateCount[];
}

/** N9: the dashboard in one call; every part reads current state or rollup rows only. */
export async function dashboardSummary(
  em: EntityManager,
  range: { start: string; end: string },
  supplierId: string | null,
): Promise<DashboardSummary> {
  return {
    stockPerSupplier: await stockPerSupplier(em, supplierId),
    lowStockItems: await lowStockItems(em, supplierId, 5),
    monthlyStockMovement: await monthlyStockMovement(em, range, supplierId),
    topUpdatedItems: await itemUpdateFrequency(em, { supplierId, ...range, limit: 5 }),
  };
}
