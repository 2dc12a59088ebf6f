import type { EntityManager } from '@mikro-orm/postgresql';
import type { ReplenishmentSettings } from '../../config/env.js';
import { nativeTransaction } from '../shared/native-transaction.js';
import { DEMAND_REASONS } from './replenishment-formulas.js';
import { serviceLevelZ } from './normal-quantile.js';
import { countSuggestions } from './suggestion-queries.js';

/** Advisory-lock namespace of replenishment (first key of the two-key form); key 0 is the run. */
export const REPLENISHMENT_LOCK_NS = 740410;

export interface ReplenishmentRunResult {
  items: number;
  suggestions: number;
}

/**
 * Per item: its window (the contract's length for young items), each day's demand from the daily reason
 * rollups (the demand reasons' decreases minus their increases, never below 0; a reversal counts on its own
 * day), and the levels' demand terms. The float operations are those of `computedLevels`, in its order:
 * s = sqrt(radicand) / windowDays, then the remainder of the lead-time demand over windowDays plus z x s x
 * sqrt(L) before the ceiling. $1 today, $2 demand days, $3 default lead days, $4 z, $5 cover days, $6 reasons.
 */
const COMPUTE = `
  with item as (
    select i.id, i.minimum_quantity,
           least($2::int, greatest(7, $1::date - (i.created_at at time zone 'UTC')::date + 1)) as w,
           coalesce(s.lead_time_days, $3::int) as l
    from inventory_item i left join supplier s on s.id = i.supplier_id),
  day_demand as (
    select r.item_id, r.day, greatest(sum(r.decrease - r.increase), 0)::bigint as q
    from analytics_reason_day r
    where r.day > $1::date - $2::int and r.day <= $1::date and r.reason = any($6::text[])
    group by r.item_id, r.day),
  per_item as (
    select dd.item_id, sum(dd.q) as total, sum(dd.q * dd.q) as sq
    from day_demand dd join item it on it.id = dd.item_id
    where dd.day > $1::date - it.w
    group by dd.item_id),
  win as (
    select it.id, it.minimum_quantity, it.w, it.l, coalesce(p.total, 0) as total, coalesce(p.sq, 0) as sq
    from item it left join per_item p on p.item_id = it.id),
  stat as (
    select win.*, sqrt((w * sq - total * total)::float8) / w as s, total * l as lead_demand,
           div(total * l, w) as whole
    from win),
  lvl as (
    select stat.*,
           whole + ceil((lead_demand - whole * w)::float8 / w + $4::float8 * s * sqrt(l::float8))::bigint as drp,
           div(total * $5::int + w - 1, w) as cover
    from stat)
  insert into replenishment_level (item_id, window_days, window_demand, sum_of_squares, demand_std_dev,
    lead_time_days, demand_reorder_point, cover_quantity, reorder_point, order_up_to_quantity, computed_at)
  select id, w, total, sq, s, l, drp, cover, greatest(minimum_quantity, drp),
         greatest(minimum_quantity, drp) + cover, $7::timestamptz
  from lvl`;

/**
 * The demand terms the suggestions's due index reads (migration ReplenishmentDue) onto the item rows, from the run's levels
 * (null without demand): only rows whose terms change, locked first in id order (as receipts and stock writes
 * lock items), so the run never deadlocks with them and holds the item locks only until its commit.
 */
const WRITE_DUE_TERMS = `
  with next as (
    select i.id, r.window_days, r.window_demand, r.lead_time_days, r.demand_reorder_point
    from inventory_item i left join replenishment_level r on r.item_id = i.id and r.window_demand > 0
    where (i.replenishment_window_days, i.replenishment_window_demand, i.replenishment_lead_days,
           i.replenishment_reorder_point)
          is distinct from (r.window_days, r.window_demand, r.lead_time_days, r.demand_reorder_point)
    order by i.id
    for no key update of i)
  update inventory_item i
  set replenishment_window_days = next.window_days, replenishment_window_demand = next.window_demand,
      replenishment_lead_days = next.lead_time_days, replenishment_reorder_point = next.demand_reorder_point
  from next where i.id = next.id`;

/**
 * The replenishment run (the replenishment run, the clock, after a report rebuild): replaces the stored computation of every item
 * in one transaction (readers see the previous run until it commits), under an exclusive advisory lock so two
 * runs never interleave. Set-based over the daily rollups: the history is never read.
 */
export async function computeReplenishment(
  em: EntityManager,
  settings: ReplenishmentSettings,
  onProgress: (percent: number) => Promise<void> = async () => undefined,
  now: Date = new Date(),
): Promise<ReplenishmentRunResult> {
  const today = now.toISOString().slice(0, 10);
  const z = serviceLevelZ(settings.serviceLevel);
  await onProgress(5);
  const items = await nativeTransaction(em, async sql => {
    await sql('set local statement_timeout = 0');
    // One long set-based statement: compiling it (JIT) cost seconds and saved nothing.
    await sql('set local jit = off');
    await sql('select pg_advisory_xact_lock($1, 0)', [REPLENISHMENT_LOCK_NS]);
    await sql('delete from replenishment_level');
    await onProgress(10);
    await sql(COMPUTE, [
      today,
      settings.demandDays,
      settings.defaultLeadDays,
      z,
      settings.coverDays,
      DEMAND_REASONS,
      now,
    ]);
    await onProgress(70);
    await sql(WRITE_DUE_TERMS);
    const [{ n }] = await sql<{ n: number }>('select count(*)::int as n from replenishment_level');
    await onProgress(90);
    await sql(
      `insert into replenishment_run (id, computed_at, today, service_level, z, items, suggestions)
       values (1, $1, $2, $3, $4, $5, 0)
       on conflict (id) do update set computed_at = excluded.computed_at, today = excluded.today,
         service_level = excluded.service_level, z = excluded.z, items = excluded.items, suggestions = 0`,
      [now, today, settings.serviceLevel, z, n],
    );
    return n;
  });
  const suggestions = await countSuggestions(em, settings, today);
  await em.execute('update replenishment_run set suggestions = ?', [suggestions]);
  await onProgress(100);
  return { items, suggestions };
}
