import type { EntityManager } from '@mikro-orm/postgresql';
import type { ReplenishmentSettings } from '../../config/env.js';
import { poolRun } from '../shared/native-transaction.js';
import type { SearchPage } from '../shared/paging.js';
import { LEVEL_CAP } from './replenishment-formulas.js';
import { dueItem } from './due-items.js';
import type { DraftLine } from './split-draft-orders.js';

/** A row of the suggestions: every input of the decision. */
export interface SuggestionView {
  itemId: string;
  itemName: string;
  sku: string | null;
  supplierId: string;
  supplierName: string;
  quantity: number;
  onOrderQuantity: number;
  inventoryPosition: number;
  minimumQuantity: number;
  dailyDemand: number;
  demandStdDev: number;
  leadTimeDays: number;
  serviceLevel: number;
  reorderPoint: number;
  orderUpToQuantity: number;
  suggestedQuantity: number;
  daysOfCover: number | null;
  projectedStockoutDate: string | null;
  orderByDate: string | null;
  unitCost: number;
  suggestedCost: number;
}

export type SuggestionPage = SearchPage<SuggestionView> & { computedAt: string | null };

/**
 * The suggestions of today ($1), combining the stored computation with each item's CURRENT quantity, on-order
 * quantity, minimum, own levels and supplier (`suggest` of replenishment-formulas.ts, in SQL), over the due items
 * alone (due-items.ts: the partial index). An item the last run did not see (created since) counts as without
 * demand, with its supplier's lead time. `where` filters the items (`i`); $2 is the default lead time, further
 * parameters are the caller's.
 */
export const suggestionsSql = (where: string) => `
  with base as (
    select i.id, i.name, i.sku, i.supplier_id, s.name as supplier_name, i.quantity,
           i.on_order_quantity as on_order, i.minimum_quantity as minimum, i.reorder_point as own_rop,
           i.order_up_to_quantity as own_out, i.price, coalesce(r.window_days, 0) as w,
           coalesce(r.window_demand, 0) as total, coalesce(r.demand_std_dev, 0) as sd,
           coalesce(r.lead_time_days, s.lead_time_days, $2::int) as l,
           greatest(i.minimum_quantity, coalesce(r.demand_reorder_point, 0)) as crop,
           coalesce(r.cover_quantity, 0) as cover
    from inventory_item i join supplier s on s.id = i.supplier_id
    left join replenishment_level r on r.item_id = i.id
    where ${dueItem('i')} and ${where}),
  eff as (
    select base.*, least(${LEVEL_CAP}, coalesce(own_rop, crop)) as rop, quantity + on_order as position
    from base),
  due as (
    select eff.*, least(${LEVEL_CAP}, greatest(coalesce(own_out, crop + cover), rop + 1)) as out,
           case when total > 0 then div(quantity::bigint * w, total) end as cover_days
    from eff
    where position <= rop and (total > 0 or quantity < minimum or own_rop is not null)),
  dated as (
    select due.*, out - position as suggested,
           case when cover_days <= '9999-12-30'::date - $1::date then $1::date + cover_days::int end as stockout
    from due where out - position >= 1)
  select dated.*, case when stockout is not null then greatest($1::date, stockout - l) end as order_by
  from dated`;

export const VIEW_COLUMNS = `id as "itemId", name as "itemName", sku, supplier_id as "supplierId",
  supplier_name as "supplierName", quantity, on_order as "onOrderQuantity", position as "inventoryPosition",
  minimum as "minimumQuantity", round(total::numeric / nullif(w, 0), 4) as "dailyDemand",
  round(sd::numeric, 4) as "demandStdDev", l as "leadTimeDays", rop as "reorderPoint",
  out as "orderUpToQuantity", suggested as "suggestedQuantity", cover_days as "daysOfCover",
  to_char(stockout, 'YYYY-MM-DD') as "projectedStockoutDate", to_char(order_by, 'YYYY-MM-DD') as "orderByDate",
  price as "unitCost", price * suggested as "suggestedCost"`;

/** The suggestions's order: order-by date (soonest first, nulls last), then item name. */
export const ORDER = 'order_by asc nulls last, name asc, id asc';

export type JsonRow = Omit<SuggestionView, 'serviceLevel' | 'dailyDemand'> & { dailyDemand: number | null };

export const toView = (row: JsonRow, serviceLevel: number): SuggestionView => ({
  ...row,
  dailyDemand: row.dailyDemand ?? 0,
  serviceLevel,
  unitCost: Number(row.unitCost),
  suggestedCost: Number(row.suggestedCost),
});

/** Today's UTC date. */
export const utcToday = (now: Date = new Date()): string => now.toISOString().slice(0, 10);

/** How many items have a suggestion today (the run's result). */
export async function countSuggestions(
  em: EntityManager,
  settings: ReplenishmentSettings,
  today: string,
): Promise<number> {
  const sql = await poolRun(em);
  const [{ n }] = await sql<{ n: number }>(`select count(*)::int as n from (${suggestionsSql('true')}) x`, [
    today,
    settings.defaultLeadDays,
  ]);
  return n;
}

/** Items on an open order (DRAFT, ORDERED, PARTIALLY_RECEIVED): The draft orders from suggestions leaves them out. */
const ON_OPEN_ORDER = `exists (select 1 from purchase_order_line l join purchase_order o on o.id = l.purchase_order_id
  where l.item_id = i.id and o.status in ('DRAFT', 'ORDERED', 'PARTIALLY_RECEIVED'))`;

/** `$n` parameters as the ORM's `?` ones (each occurrence its own value), to run in its transaction. */
function questionMarks(text: string, values: unknown[]): [string, unknown[]] {
  const ordered: unknown[] = [];
  return [text.replace(/\$(\d+)/g, (_, n: string) => (ordered.push(values[Number(n) - 1]), '?')), ordered];
}

/**
 * Today's suggestions of one supplier whose item is on no open order (the draft orders from suggestions), in the suggestions's order, read in the
 * transaction of `tx` (the caller holds the supplier's draft lock, so what it reads stays true until commit).
 */
export async function orderableSuggestions(
  tx: EntityManager,
  settings: ReplenishmentSettings,
  supplierId: string,
  today: string = utcToday(),
): Promise<DraftLine[]> {
  const [text, values] = questionMarks(
    `select id as "itemId", suggested::int as "suggestedQuantity", (price * 100)::bigint::text as "priceCents"
     from (${suggestionsSql(`i.supplier_id = $3::uuid and not ${ON_OPEN_ORDER}`)}) x order by ${ORDER}`,
    [today, settings.defaultLeadDays, supplierId],
  );
  const rows = await tx.execute<(Omit<DraftLine, 'priceCents'> & { priceCents: string })[]>(text, values);
  return rows.map(row => ({ ...row, priceCents: BigInt(row.priceCents) }));
}

/** Suppliers with at least one suggestion today whose item is on no open order, in id order. */
export async function suppliersToOrderFrom(
  em: EntityManager,
  settings: ReplenishmentSettings,
  today: string = utcToday(),
): Promise<string[]> {
  const sql = await poolRun(em);
  const rows = await sql<{ supplier_id: string }>(
    `select distinct supplier_id from (${suggestionsSql(`not ${ON_OPEN_ORDER}`)}) x order by supplier_id`,
    [today, settings.defaultLeadDays],
  );
  return rows.map(row => row.supplier_id);
}
