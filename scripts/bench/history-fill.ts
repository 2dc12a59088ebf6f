import type pg from 'pg';

export const FILL_ITEMS = 2000;
export const FILL_SUPPLIERS = 20;
/**
 * The history spans three years (in seconds: an interval in months times a fraction is not linear in time) up
 * to the start of the fill (so the newest entries are the front page).
 */
const SPAN = "interval '94608000 seconds'";
/** Reasons in turn, with the change each books (so DAMAGED is an eighth of the history). */
const REASONS = [
  ['SALE', -2],
  ['RESTOCK', 5],
  ['DAMAGED', -1],
  ['RETURN', 1],
  ['MANUAL_ADJUSTMENT', 2],
  ['INVENTORY_COUNT', -1],
  ['PRICE_CHANGE', 0],
  ['EXPIRED', -1],
] as const;

/**
 * Suppliers `Fill supplier 0..19` and items `item 0..1999` (item n with supplier n % 20), once per database.
 * Returns the supplier ids in order.
 */
export async function fillCatalog(db: pg.Pool): Promise<string[]> {
  await db.query(
    `insert into supplier (name, created_by)
     select 'Fill supplier ' || s, 'bench' from generate_series(0, ${FILL_SUPPLIERS - 1}) s
     on conflict do nothing`,
  );
  const { rows } = await db.query<{ id: string }>(
    `select id from supplier where name like 'Fill supplier %' order by substring(name from 15)::int`,
  );
  await db.query(
    `insert into inventory_item (name, quantity, price, supplier_id, created_by)
     select 'item ' || n, 1000, 9.99, s.ids[1 + n % ${FILL_SUPPLIERS}], 'bench'
     from generate_series(0, ${FILL_ITEMS - 1}) n,
          (select array_agg(id order by substring(name from 15)::int) as ids from supplier
           where name like 'Fill supplier %') s
     on conflict do nothing`,
  );
  return rows.map(r => r.id);
}

/**
 * How a fill spreads its entries (BENCH_HISTORY_SHAPE): `spread`, the bench's own, steps through the items in a
 * scattered order over three years whatever the size (so 10^7 entries lie on the same days as the first 10^5);
 * `daily`, a shop's shape, has every item move every day up to today, `target / (2,000 x 1,096)` entries an item
 * a day rounded (at least one; so about three years), each day's entries over the items in turn, at prices that
 * change from day to day.
 */
export type FillShape = 'spread' | 'daily';

/** Days of three years. */
const DAYS = 1096;

/** Per entry number g (from 1): its item's number, its time and its price, in the shape's SQL. */
function shapeSql(shape: FillShape, target: number): { item: string; at: string; price: string } {
  if (shape === 'spread')
    return {
      item: `(g * 7919) % ${FILL_ITEMS}`,
      at: `t0 - (1 - g::float8 / ${target}) * ${SPAN}`,
      price: '9.99',
    };
  const perDay = FILL_ITEMS * Math.max(1, Math.round(target / (FILL_ITEMS * DAYS)));
  const days = Math.ceil(target / perDay);
  const day = `((g - 1) / ${perDay})`;
  return {
    item: `((g - 1) * 7919) % ${FILL_ITEMS}`,
    at: `date_trunc('day', t0) - ${days} * interval '1 day' + ${day} * interval '1 day'
         + ((g - 1) % ${perDay})::float8 / ${perDay} * interval '1 day'`,
    price: `5 + ((g - 1) % ${FILL_ITEMS}) % 50 + (${day} % 90) / 100.0`,
  };
}

/**
 * Appends history entries in SQL until the history holds `target` entries, in `shape`, in timestamp order (as
 * the consumer appends them), in statements of at most a million entries (event ids below every real one, in
 * the same order). The count trigger keeps its tables as for any writer.
 */
export async function fillHistory(
  db: pg.Pool,
  target: number,
  onProgress: (done: number) => void = () => undefined,
  shape: FillShape = 'spread',
): Promise<void> {
  const {
    rows: [{ n }],
  } = await db.query<{ n: string }>('select count(*) as n from stock_history');
  const chunk = 1_000_000;
  const { item, at, price } = shapeSql(shape, target);
  for (let from = Number(n); from < target; from += chunk) {
    const to = Math.min(target, from + chunk);
    await db.query(
      `insert into stock_history (outbox_event_id, item_id, item_name, supplier_id, supplier_name, change,
         quantity_before, quantity_after, reason, price_at_change, created_by, "timestamp")
       select g - 1000000000000, i.id, i.name, i.supplier_id, s.name, r.change, 100, 100 + r.change, r.reason,
              ${price}, 'user' || (g % 7) || '@bench.test', ${at}
       from generate_series($1::bigint + 1, $2::bigint) g
       cross join (select now() as t0) t
       join (select id, name, supplier_id, substring(name from 6)::int as n from inventory_item
             where name like 'item %') i on i.n = ${item}
       join supplier s on s.id = i.supplier_id
       join (select * from unnest($3::text[], $4::int[]) with ordinality as r(reason, change, k)) r
         on r.k = 1 + (g / 7) % ${REASONS.length}
       order by g`,
      [from, to, REASONS.map(r => r[0]), REASONS.map(r => r[1])],
    );
    onProgress(to);
  }
}
