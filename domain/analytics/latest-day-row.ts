/**
 * An item's latest `analytics_item_day` row within a bound (`bound`: e.g. `< ?::date`), as a subquery selecting
 * `columns` of it (alias `r`): the row of the item's last day in the bound (one probe of the primary key
 * (item_id, day) backwards) with the highest last_event_id (an item has several on a day it changed supplier).
 * Ordering the item's rows by (day desc, last_event_id desc) instead needs an index holding last_event_id, which
 * a fold changes: with one, no update of a day row could be a HOT update (migration RollupHotUpdates); without
 * one, PostgreSQL may sort all of an item's days.
 */
export const latestDayRow = (columns: string, itemId: string, bound: string): string =>
  `select ${columns} from analytics_item_day r
    where r.item_id = ${itemId}
      and r.day = (select max(m.day) from analytics_item_day m where m.item_id = ${itemId} and m.day ${bound})
    order by r.last_event_id desc limit 1`;
