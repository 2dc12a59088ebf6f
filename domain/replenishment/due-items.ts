/**
 * Which items are due, over the item row alone, so that one partial index (migration ReplenishmentDue) holds
 * exactly them: the run writes an item's demand terms onto its row (`replenishment_*`, null when its window had
 * no demand), every other input is the row's current state. The texts must stay those of the migration's index
 * (PostgreSQL uses a partial or expression index only for the same expression); a test holds the suggestions's plan to it.
 */

/**
 * Due: inventoryPosition <= the effective reorder point (own, else max(minimum, the run's demand term)), and
 * demand, or below the minimum, or an own reorder point. The bound is one below the level cap: at the cap the
 * order-up-to level equals the reorder point, so a position there leaves nothing to order.
 */
export const dueItem = (i: string): string =>
  `${i}.quantity + ${i}.on_order_quantity <= least(999998, coalesce(
    ${i}.reorder_point,
    greatest(${i}.minimum_quantity, coalesce(${i}.replenishment_reorder_point, 0))))
  and (${i}.replenishment_window_demand is not null
    or ${i}.quantity < ${i}.minimum_quantity or ${i}.reorder_point is not null)`;

/** daysOfCover with the run's window: floor(quantity x windowDays / windowDemand); null without demand. */
export const daysOfCover = (i: string): string =>
  `case when ${i}.replenishment_window_demand > 0
    then ${i}.quantity::bigint * ${i}.replenishment_window_days / ${i}.replenishment_window_demand end`;

/**
 * The order-by date's distance from today, max(0, daysOfCover - leadTimeDays); null without demand. It does not
 * depend on today, so the index keeps it; only the contract's last date (order-by null beyond 9999-12-30) does,
 * which the reads apply to daysOfCover.
 */
export const dueOrderKey = (i: string): string =>
  `case when ${i}.replenishment_window_demand > 0 then greatest(0,
    ${i}.quantity::bigint * ${i}.replenishment_window_days
      / ${i}.replenishment_window_demand - ${i}.replenishment_lead_days) end`;
