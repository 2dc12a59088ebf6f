import type { EntityManager } from '@mikro-orm/postgresql';
import { orderByClause, springPage, type PageRequest, type SpringPage } from '../../shared/paging.js';
import {
  STOCK_UPDATE_COLUMNS,
  stockUpdateWhere,
  toStockUpdateRow,
  type StockUpdateFilter,
  type StockUpdateRow,
} from './stock-updates.js';

export const EMPLOYEE_CHANGES_SORT = {
  sortable: { timestamp: '"timestamp"', change: 'change', createdBy: 'created_by' },
  defaultSort: [{ property: 'timestamp', direction: 'DESC' as const }],
};

/** An employee's changes: a Spring-style page of history rows (the stock updates shape) filtered by user, supplier and time. */
export async function employeeChanges(
  em: EntityManager,
  filter: StockUpdateFilter,
  page: PageRequest,
): Promise<SpringPage<StockUpdateRow>> {
  const where = stockUpdateWhere(filter);
  const [{ n }] = await em.execute<{ n: string }[]>(
    `select count(*) as n from stock_history where ${where.sql}`,
    where.params,
  );
  const rows = await em.execute<any[]>(
    `select ${STOCK_UPDATE_COLUMNS} from stock_history where ${where.sql}
     order by ${orderByClause(page.sort, EMPLOYEE_CHANGES_SORT, 'outbox_event_id')} limit ? offset ?`,
    [...where.params, page.size, page.page * page.size],
  );
  return springPage(rows.map(toStockUpdateRow), page, Number(n));
}
