/**
 * An item's latest `analytics_item_day` row within a bound (`bound`: e.g. `< ?::date`), as a subquery selecting
 * `columns` of it (alias `r`): the row of the item's last day in the bound with the highest last_event_id (an
 * item has several on a day it changed supplier). The primary key (item_id, day, supplier_key) is read backwards
 * from the bound and an incremental sort orders only the rows of that one day by last_event_id, so the cost is
 * one index probe whatever the statistics say. (Comparing the day with a subquery's max let the planner take
 * the day index instead, filtering every row of that day by item: after an import that touched many items on
 * one day, a read over all items did not finish.) No index holds last_event_id, which a fold changes, so day
 * rows keep their HOT updates (migration RollupHotUpdates).
 */
export const latestDayRow = (columns: string, itemId: string, bound: string): string =>
  `select ${columns} from analytics_item_day r
    where r.item_id = ${itemId} and r.day ${bound}
    order by r.day desc, r.last_event_id desc limit 1`;
