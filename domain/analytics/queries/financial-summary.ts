import type { EntityManager } from '@mikro-orm/postgresql';
import { supplierBuckets } from './supplier-buckets.js';
import { divRound, toUnits, unitsToMoney, unitsToNumber4 } from '../decimal.js';
import { latestDayRow } from './latest-day-row.js';

const COST_BUCKETS = ['purchases', 'returns_in', 'cogs', 'write_off'].flatMap(b => [`${b}_qty`, `${b}_cost`]);

export interface FinancialSummary {
  totalInventoryValue: number;
  totalQuantity: number;
  weightedAverageCost: number;
  totalCost: number;
  period: { from: string; to: string };
  method: 'WAC';
  fromDate: string;
  toDate: string;
  openingQty: number;
  openingValue: number;
  purchasesQty: number;
  purchasesCost: number;
  returnsInQty: number;
  returnsInCost: number;
  cogsQty: number;
  cogsCost: number;
  writeOffQty: number;
  writeOffCost: number;
  endingQty: number;
  endingValue: number;
}

/**
 * The financial summary: the weighted-average-cost summary from the rollups. Opening = each item's running
 * state after its last event before `from`; buckets = sums of the supplier buckets covering [from, to]; ending = each item's
 * state after its last event up to `to`. With a supplier, buckets count that supplier's events and
 * opening/ending the items whose latest event (at that point) was that supplier's. Values are exact (1e-4)
 * and rounded half-up to cents at output; weightedAverageCost = endingValue / endingQty to 4 decimals.
 */
export async function financialSummary(
  em: EntityManager,
  range: { start: string; end: string },
  supplierId: string | null,
): Promise<FinancialSummary> {
  const latest = (op: '<' | '<=') => `
    select coalesce(sum(b.wac_q), 0)::text as q, coalesce(sum(b.wac_q * b.wac_c), 0)::text as v
    from analytics_item i
    join lateral (${latestDayRow('r.wac_q, r.wac_c, r.supplier_key', 'i.item_id', `${op} ?::date`)}) b on true
    where (?::uuid is null or b.supplier_key = ?::uuid)`;
  const [opening] = await em.execute<{ q: string; v: string }[]>(latest('<'), [
    range.start,
    supplierId,
    supplierId,
  ]);
  const [ending] = await em.execute<{ q: string; v: string }[]>(latest('<='), [
    range.end,
    supplierId,
    supplierId,
  ]);
  const buckets = supplierBuckets(COST_BUCKETS, range, supplierId);
  const [b] = await em.execute<Record<string, string>[]>(
    `select coalesce(sum(purchases_qty), 0)::text as pq, coalesce(sum(purchases_cost), 0)::text as pc,
            coalesce(sum(returns_in_qty), 0)::text as rq, coalesce(sum(returns_in_cost), 0)::text as rc,
            coalesce(sum(cogs_qty), 0)::text as cq, coalesce(sum(cogs_cost), 0)::text as cc,
            coalesce(sum(write_off_qty), 0)::text as wq, coalesce(sum(write_off_cost), 0)::text as wc
     from (${buckets.sql}) b`,
    buckets.params,
  );
  const endingQty = Number(ending.q);
  const endingValue = toUnits(ending.v);
  const wac = endingQty === 0 ? 0n : divRound(endingValue, BigInt(endingQty));
  const purchasesCost = unitsToMoney(toUnits(b.pc));
  return {
    totalInventoryValue: unitsToMoney(endingValue),
    totalQuantity: endingQty,
    weightedAverageCost: unitsToNumber4(wac),
    totalCost: purchasesCost,
    period: { from: range.start, to: range.end },
    method: 'WAC',
    fromDate: range.start,
    toDate: range.end,
    openingQty: Number(opening.q),
    openingValue: unitsToMoney(toUnits(opening.v)),
    purchasesQty: Number(b.pq),
    purchasesCost,
    returnsInQty: Number(b.rq),
    returnsInCost: unitsToMoney(toUnits(b.rc)),
    cogsQty: Number(b.cq),
    cogsCost: unitsToMoney(toUnits(b.cc)),
    writeOffQty: Number(b.wq),
    writeOffCost: unitsToMoney(toUnits(b.wc)),
    endingQty,
    endingValue: unitsToMoney(endingValue),
  };
}
