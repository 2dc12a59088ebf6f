/**
 * The day of an item's latest `analytics_item_day` row within a bound (`bound`: e.g. `< ?::date`), as a scalar
 * subquery: one probe of the primary key (item_id, day) backwards. Readers then take that day's row with the
 * highest last_event_id (an item has several on a day it changed supplier). Ordering the item's rows by
 * (day desc, last_event_id desc) instead needs an index holding last_event_id, which a fold changes: with one,
 * no update of a day row could be a HOT update (migration RollupHotUpdates); without one, PostgreSQL may sort
 * all of an item's days.
 */
export const latestDay = (itemId: string, bound: string): string =>
  `select max(m.day) from analytics_item_day m where m.item_id = ${itemId} and m.day ${bound}`;
