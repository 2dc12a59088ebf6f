import type { EntityManager } from '@mikro-orm/postgresql';
import { NotFoundError } from '../shared/errors.js';
import {
  orderByClause,
  parsePageRequest,
  parseSort,
  springPage,
  type PageRules,
  type SpringPage,
} from '../shared/paging.js';
import { containsPattern, isUuid, type SqlPart } from '../shared/sql.js';
import { Supplier } from './supplier.entity.js';
import { SUPPLIER_COLUMNS, toSupplierView, type SupplierView } from './supplier.view.js';

const RULES: PageRules = {
  maxSize: 200,
  defaultSize: 20,
  sortable: { name: 'lower(name)', createdAt: 'created_at', email: 'lower(email)' },
  defaultSort: [{ property: 'name', direction: 'ASC' }],
};

export interface ListSuppliersQuery {
  limit?: number;
  page?: number;
  size?: number;
  sort?: string | string[];
}

/** The supplier list with `size`: a Spring-style page. */
export async function pageSuppliers(
  em: EntityManager,
  query: ListSuppliersQuery,
): Promise<SpringPage<SupplierView>> {
  const request = parsePageRequest(query, RULES);
  const [rows, total] = await Promise.all([
    em.execute<SupplierView[]>(
      `select ${SUPPLIER_COLUMNS} from supplier order by ${orderByClause(request.sort, RULES, 'id')}
       limit ? offset ?`,
      [request.size, request.page * request.size],
    ),
    countSuppliers(em),
  ]);
  return springPage(rows.map(toSupplierView), request, total);
}

/** The supplier list without `size`: the plain array (sorted, `limit` caps it); the route streams it (toSupplierView). */
export function supplierListQuery(query: ListSuppliersQuery): SqlPart {
  const sort = parseSort(query.sort, RULES);
  return {
    sql: `select ${SUPPLIER_COLUMNS} from supplier order by ${orderByClause(sort, RULES, 'id')}
     ${query.limit !== undefined ? 'limit ?' : ''}`,
    params: query.limit !== undefined ? [query.limit] : [],
  };
}

/** The supplier read. */
export async function getSupplier(em: EntityManager, id: string): Promise<SupplierView> {
  if (!isUuid(id)) throw new NotFoundError('error.not.found.supplier');
  const supplier = await em.findOne(Supplier, id);
  if (!supplier) throw new NotFoundError('error.not.found.supplier');
  return toSupplierView(supplier);
}

/** The supplier count. */
export async function countSuppliers(em: EntityManager): Promise<number> {
  const rows = await em.execute<{ n: string }[]>('select count(*) as n from supplier');
  return Number(rows[0].n);
}

/** The supplier search: case-insensitive substring of the name, by name. */
export async function searchSuppliers(em: EntityManager, name: string): Promise<SupplierView[]> {
  const rows = await em.execute<SupplierView[]>(
    `select ${SUPPLIER_COLUMNS} from supplier where name ilike ? order by lower(name), id`,
    [containsPattern(name)],
  );
  return rows.map(toSupplierView);
}
