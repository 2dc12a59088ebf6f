import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Nightly closing snapshot: the current quantity and value per supplier, recorded for the day that just
 * ended (the clock fires shortly after midnight UTC). Idempotent: a repeat overwrites the same day.
 */
export async function takeDailySnapshot(em: EntityManager, at: string): Promise<number> {
  const day = new Date(new Date(at).getTime() - 60 * 60 * 1000).toISOString().slice(0, 10);
  const rows = await em.execute<{ n: string }[]>(
    `with ins as (
       insert into analytics_daily_snapshot (day, supplier_id, total_quantity, total_value, taken_at)
       select ?::date, supplier_id, sum(quantity), sum(quantity * price), now()
       from inventory_item group by supplier_id
       on conflict (day, supplier_id) do update set total_quantity = excluded.total_quantity,
         total_value = excluded.total_value, taken_at = excluded.taken_at
       returning 1)
     select count(*) as n from ins`,
    [day],
  );
  return Number(rows[0].n);
}
