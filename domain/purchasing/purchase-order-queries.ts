import type { EntityManager } from '@mikro-orm/postgresql';
import { arrayLiteral, isUuid, type SqlPart } from '../shared/sql.js';
import {
  orderByClause,
  parsePageRequest,
  searchPage,
  type PageRules,
  type SearchPage,
} from '../shared/paging.js';
import type { CsvColumn } from '../shared/csv-cells.js';
import { PurchaseOrder, type OrderStatus } from './purchase-order.entity.js';
import { PurchaseReceipt } from './purchase-receipt.entity.js';
import { toPurchaseOrderView, type PurchaseOrderView } from './purchase-order.view.js';
import { toReceiptView, type ReceiptView } from './receipt.view.js';
import { orderNotFound, receiptNotFound, staleOrder, wrongStatus } from './purchasing-errors.js';

/** The order read: one order with its supplier and lines. */
export async function getPurchaseOrder(em: EntityManager, id: string): Promise<PurchaseOrderView> {
  const order = isUuid(id)
    ? await em.findOne(PurchaseOrder, id, { populate: ['supplier', 'lines'], disableIdentityMap: true })
    : null;
  if (!order) throw orderNotFound();
  return toPurchaseOrderView(order);
}

const LIST_RULES: PageRules = {
  maxSize: 100,
  defaultSize: 20,
  sortable: {
    createdAt: 'o.created_at',
    number: 'o.number',
    expectedAt: 'o.expected_at',
    totalCost: 'o.total_cost',
  },
  defaultSort: [{ property: 'createdAt', direction: 'DESC' }],
};

export interface ListOrdersQuery {
  status?: OrderStatus | OrderStatus[];
  supplierId?: string;
  itemId?: string;
  page?: number;
  size?: number;
  sort?: string | string[];
}

/** The filters of the order search as a where clause; undefined when nothing can match (an id that is no UUID). */
function orderWhere(query: ListOrdersQuery): SqlPart | undefined {
  const where: string[] = [];
  const params: unknown[] = [];
  if (query.status !== undefined) {
    where.push('o.status = any(?::text[])');
    params.push(arrayLiteral(Array.isArray(query.status) ? query.status : [query.status]));
  }
  for (const [id, sql] of [
    [query.supplierId, 'o.supplier_id = ?'],
    [
      query.itemId,
      'exists (select 1 from purchase_order_line l where l.purchase_order_id = o.id and l.item_id = ?)',
    ],
  ] as const) {
    if (id === undefined) continue;
    if (!isUuid(id)) return undefined;
    where.push(sql);
    params.push(id);
  }
  return { sql: where.length > 0 ? `where ${where.join(' and ')}` : '', params };
}

/** The order search: a search page of orders (status repeatable, supplier, item), newest first by default. */
export async function listPurchaseOrders(
  em: EntityManager,
  query: ListOrdersQuery,
): Promise<SearchPage<PurchaseOrderView>> {
  const request = parsePageRequest(query, LIST_RULES);
  const where = orderWhere(query);
  if (!where) return searchPage([], request, 0);
  const [ids, count] = await Promise.all([
    em.execute<{ id: string }[]>(
      `select o.id from purchase_order o ${where.sql}
        order by ${orderByClause(request.sort, LIST_RULES, 'o.id')} limit ? offset ?`,
      [...where.params, request.size, request.page * request.size],
    ),
    em.execute<{ n: string }[]>(`select count(*) as n from purchase_order o ${where.sql}`, where.params),
  ]);
  const orders = await em.find(
    PurchaseOrder,
    { id: { $in: ids.map(row => row.id) } },
    { populate: ['supplier', 'lines'], disableIdentityMap: true },
  );
  const byId = new Map(orders.map(order => [order.id, order]));
  return searchPage(
    ids.map(row => toPurchaseOrderView(byId.get(row.id)!)),
    request,
    Number(count[0].n),
  );
}

/** The receipts: an order's receipts, oldest first (404 for an unknown order). */
export async function listReceipts(em: EntityManager, orderId: string): Promise<ReceiptView[]> {
  await getPurchaseOrder(em, orderId);
  const receipts = await em.find(
    PurchaseReceipt,
    { purchaseOrder: orderId },
    { populate: ['lines'], orderBy: { receivedAt: 'asc', id: 'asc' }, disableIdentityMap: true },
  );
  return receipts.map(toReceiptView);
}

/** The receipts: one receipt of an order. */
export async function getReceipt(
  em: EntityManager,
  orderId: string,
  receiptId: string,
): Promise<ReceiptView> {
  await getPurchaseOrder(em, orderId);
  const receipt = isUuid(receiptId)
    ? await em.findOne(
        PurchaseReceipt,
        { id: receiptId, purchaseOrder: orderId },
        { populate: ['lines'], disableIdentityMap: true },
      )
    : null;
  if (!receipt) throw receiptNotFound();
  return toReceiptView(receipt);
}

/** One row of the order export (the CSV sent to the supplier). */
export interface OrderCsvRow {
  orderNumber: string;
  supplier: string;
  expectedAt: string | null;
  sku: string | null;
  name: string;
  quantity: number;
  unitCost: number;
  lineTotal: number;
}

export const ORDER_CSV_COLUMNS: CsvColumn<OrderCsvRow>[] = (
  ['orderNumber', 'supplier', 'expectedAt', 'sku', 'name', 'quantity', 'unitCost', 'lineTotal'] as const
).map(key => ({ header: key, key }));

/** The order export: one row per line of the order. */
export const orderCsvRows = (order: PurchaseOrderView): OrderCsvRow[] =>
  order.lines.map(line => ({
    orderNumber: order.number,
    supplier: order.supplierName,
    expectedAt: order.expectedAt,
    sku: line.sku,
    name: line.itemName,
    quantity: line.quantityOrdered,
    unitCost: line.unitCost,
    lineTotal: line.lineTotal,
  }));

/**
 * The order update's checks before its body is validated (the contract's order): 404 -> 412 (`If-Match`) -> 409 unless DRAFT.
 * The use case checks them again under the order's lock.
 */
export async function assertOrderEditable(
  em: EntityManager,
  id: string,
  expectedVersion: number | undefined,
): Promise<void> {
  const [found] = isUuid(id)
    ? await em.execute<{ status: string; version: number }[]>(
        'select status, version from purchase_order where id = ?',
        [id],
      )
    : [];
  if (!found) throw orderNotFound();
  if (expectedVersion !== undefined && found.version !== expectedVersion) throw staleOrder();
  if (found.status !== 'DRAFT') throw wrongStatus(found.status);
}
