/**
 * "How a suggestion is computed" (purchasing contract) as pure functions. The worker's SQL
 * (compute-replenishment.ts) evaluates the same formulas in the same order of floating-point operations, so
 * both give bit-identical levels; a property test holds them to each other and to the contract's text.
 */

/** Reasons whose net decrease of a day is demand. */
export const DEMAND_REASONS = ['SALE', 'DAMAGED', 'EXPIRED', 'SCRAPPED', 'DESTROYED', 'LOST'] as const;

/** Levels and dates are capped here (the quantity cap). */
export const LEVEL_CAP = 999_999;
const LAST_DATE = '9999-12-30';
const DAY_MS = 86_400_000;

/** One day's movements of one reason (a row of the daily reason rollup). */
export interface ReasonDay {
  reason: string;
  increase: number;
  decrease: number;
}

/** A day's demand: its decreases minus its increases over the demand reasons, never below 0. */
export function dayDemand(rows: readonly ReasonDay[]): number {
  let net = 0;
  for (const row of rows)
    if ((DEMAND_REASONS as readonly string[]).includes(row.reason)) net += row.decrease - row.increase;
  return Math.max(net, 0);
}

/** Days between two UTC dates (`YYYY-MM-DD`), `to` minus `from`. */
export const daysBetween = (from: string, to: string): number =>
  Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);

/** The most days of cover that still give dates on `today`: up to the contract's last date, 9999-12-30. */
export const datedCoverLimit = (today: string): number => daysBetween(today, LAST_DATE);

/** The date `days` after `day` (`YYYY-MM-DD`). */
export const addDays = (day: string, days: number): string =>
  new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

/**
 * The window's length: the last `demandDays` days, today included; for an item created within them, the days
 * since its creation day (both included), at least 7.
 */
export const windowLength = (createdDay: string, today: string, demandDays: number): number =>
  Math.min(demandDays, Math.max(7, daysBetween(createdDay, today) + 1));

export interface DemandWindow {
  windowDays: number;
  /** Total demand of the window. */
  windowDemand: number;
  /** Sum of the squared daily demands (for the standard deviation). */
  sumOfSquares: number;
}

/** The window of the daily demands (one per day of the window; days without movement are 0). */
export function demandWindow(days: readonly number[]): DemandWindow {
  let windowDemand = 0;
  let sumOfSquares = 0;
  for (const q of days) {
    windowDemand += q;
    sumOfSquares += q * q;
  }
  return { windowDays: days.length, windowDemand, sumOfSquares };
}

export interface ComputedLevels {
  dailyDemand: number;
  /** Population standard deviation of the daily demand (unrounded). */
  demandStdDev: number;
  /** ceil(windowDemand x L / windowDays + z x s x sqrt(L)), before the minimum. */
  demandReorderPoint: number;
  /** ceil(windowDemand x coverDays / windowDays). */
  coverQuantity: number;
}

/**
 * d, s and the demand terms of the levels. The integer part of windowDemand x L / windowDays is exact (integer
 * division); its remainder over windowDays and z x s x sqrt(L) are the only doubles, added before the ceiling.
 * s = sqrt(windowDays x sumOfSquares - windowDemand^2) / windowDays, the radicand exact in integers.
 */
export function computedLevels(
  window: DemandWindow,
  leadTimeDays: number,
  z: number,
  coverDays: number,
): ComputedLevels {
  const { windowDays: w, windowDemand: total, sumOfSquares } = window;
  // Doubles are exact integers below 2^53; beyond, the same arithmetic in BigInt.
  const small =
    w * sumOfSquares <= Number.MAX_SAFE_INTEGER &&
    total * Math.max(leadTimeDays, coverDays) + w <= Number.MAX_SAFE_INTEGER;
  const exact = small
    ? integerTerms(w, total, sumOfSquares, leadTimeDays, coverDays)
    : bigTerms(window, leadTimeDays, coverDays);
  const demandStdDev = Math.sqrt(exact.radicand) / w;
  const safety = z * demandStdDev * Math.sqrt(leadTimeDays);
  return {
    dailyDemand: total / w,
    demandStdDev,
    demandReorderPoint: exact.whole + Math.ceil(exact.rest / w + safety),
    coverQuantity: exact.cover,
  };
}

interface IntegerTerms {
  /** windowDays x sumOfSquares - windowDemand^2 (as the double nearest to it). */
  radicand: number;
  /** floor(windowDemand x L / windowDays) and its remainder. */
  whole: number;
  rest: number;
  /** ceil(windowDemand x coverDays / windowDays). */
  cover: number;
}

const floorDiv = (a: number, b: number) => (a - (a % b)) / b;

function integerTerms(
  w: number,
  total: number,
  sumOfSquares: number,
  lead: number,
  coverDays: number,
): IntegerTerms {
  const leadDemand = total * lead;
  return {
    radicand: w * sumOfSquares - total * total,
    whole: floorDiv(leadDemand, w),
    rest: leadDemand % w,
    cover: floorDiv(total * coverDays + w - 1, w),
  };
}

function bigTerms(window: DemandWindow, lead: number, coverDays: number): IntegerTerms {
  const w = BigInt(window.windowDays);
  const total = BigInt(window.windowDemand);
  const leadDemand = total * BigInt(lead);
  return {
    radicand: Number(w * BigInt(window.sumOfSquares) - total * total),
    whole: Number(leadDemand / w),
    rest: Number(leadDemand % w),
    cover: Number((total * BigInt(coverDays) + w - 1n) / w),
  };
}

/** The item's state the levels are combined with at the time of reading. */
export interface ItemState {
  quantity: number;
  onOrderQuantity: number;
  minimumQuantity: number;
  ownReorderPoint: number | null;
  ownOrderUpToQuantity: number | null;
}

export interface Suggestion {
  inventoryPosition: number;
  reorderPoint: number;
  orderUpToQuantity: number;
  /** null: no suggestion (position above the reorder point, nothing to order, or no reason to order). */
  suggestedQuantity: number | null;
  daysOfCover: number | null;
  projectedStockoutDate: string | null;
  orderByDate: string | null;
}

/** The effective levels and the suggestion of one item on `today` (`YYYY-MM-DD`). */
export function suggest(
  window: DemandWindow,
  levels: ComputedLevels,
  item: ItemState,
  leadTimeDays: number,
  today: string,
): Suggestion {
  const computedReorderPoint = Math.max(item.minimumQuantity, levels.demandReorderPoint);
  const reorderPoint = Math.min(LEVEL_CAP, item.ownReorderPoint ?? computedReorderPoint);
  const orderUpToQuantity = Math.min(
    LEVEL_CAP,
    Math.max(item.ownOrderUpToQuantity ?? computedReorderPoint + levels.coverQuantity, reorderPoint + 1),
  );
  const inventoryPosition = item.quantity + item.onOrderQuantity;
  const demand = window.windowDemand > 0;
  const due =
    inventoryPosition <= reorderPoint &&
    (demand || item.quantity < item.minimumQuantity || item.ownReorderPoint !== null);
  const suggested = orderUpToQuantity - inventoryPosition;
  // Integer division exactly (every operand stays far below 2^53).
  const covered = item.quantity * window.windowDays;
  const daysOfCover = demand ? (covered - (covered % window.windowDemand)) / window.windowDemand : null;
  const dated = daysOfCover !== null && daysOfCover <= datedCoverLimit(today);
  const projectedStockoutDate = dated ? addDays(today, daysOfCover) : null;
  return {
    inventoryPosition,
    reorderPoint,
    orderUpToQuantity,
    suggestedQuantity: due && suggested >= 1 ? suggested : null,
    daysOfCover,
    projectedStockoutDate,
    orderByDate: dated ? addDays(today, Math.max(0, daysOfCover - leadTimeDays)) : null,
  };
}
