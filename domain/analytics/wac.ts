import { divRound, toUnits } from './decimal.js';

/**
 * The weighted-average-cost algorithm of the contract, one event at a time, per item in event order,
 * starting at (q = 0, c = 0). Amounts are bigint units of 1e-4.
 *
 * inbound n at unit cost u (the entry's own unit cost, a receipt's line cost; else its priceAtChange):
 * c' = round4((q*c + n*u) / (q + n)), q' = q + n;
 * outbound n: cost issued c*n, q' = max(0, q - n); change 0 (PRICE_CHANGE, deletions): no move.
 */
export interface WacState {
  q: number;
  c: bigint;
}

export type WacBucket = 'purchases' | 'returnsIn' | 'cogs' | 'writeOff';

export interface WacMove {
  bucket: WacBucket;
  /** Signed: a return to the supplier is a negative purchase. */
  qty: number;
  cost: bigint;
}

export const WRITE_OFF_REASONS: ReadonlySet<string> = new Set([
  'DAMAGED',
  'DESTROYED',
  'SCRAPPED',
  'EXPIRED',
  'LOST',
]);

/**
 * Where a move is booked, and the sign of its quantity and cost (times the moved quantity n and its cost, both
 * positive), by the reason and the direction of the ORIGINAL move: stock in is a purchase (a customer's return:
 * returnsIn); stock out is cost of goods sold, a write-off for WRITE_OFF_REASONS, or a negative purchase when it
 * goes back to the supplier. A reversal is booked in its original's bucket with the opposite sign.
 */
export function wacBooking(
  reason: string,
  originalInbound: boolean,
  reversal: boolean,
): { bucket: WacBucket; sign: 1 | -1 } {
  const toSupplier = !originalInbound && reason === 'RETURNED_TO_SUPPLIER';
  const bucket: WacBucket = originalInbound
    ? reason === 'RETURN'
      ? 'returnsIn'
      : 'purchases'
    : toSupplier
      ? 'purchases'
      : WRITE_OFF_REASONS.has(reason)
        ? 'writeOff'
        : 'cogs';
  return { bucket, sign: toSupplier !== reversal ? -1 : 1 };
}

/** The move of n units costing `cost` booked by wacBooking. */
function bookedMove(
  reason: string,
  originalInbound: boolean,
  reversal: boolean,
  n: number,
  cost: bigint,
): WacMove {
  const { bucket, sign } = wacBooking(reason, originalInbound, reversal);
  return { bucket, qty: sign * n, cost: BigInt(sign) * cost };
}

/**
 * A reversal (contract, "Analytics of reversals"): booked in the original's bucket with the opposite sign at the
 * original's unit cost `unitCost`, so the average returns to what it would have been without the original.
 * Reversing an inbound n at u: q' = q - n, c' = round4((q*c - n*u) / q') (never below 0; c kept at q' = 0).
 * Reversing an outbound n issued at u: c' = round4((q*c + n*u) / (q + n)), q' = q + n.
 */
export function applyReversal(
  state: WacState,
  change: number,
  reason: string,
  unitCost: string,
): { state: WacState; move?: WacMove } {
  const u = toUnits(unitCost);
  const n = BigInt(Math.abs(change));
  if (change > 0) {
    const c = divRound(BigInt(state.q) * state.c + n * u, BigInt(state.q) + n);
    return { state: { q: state.q + change, c }, move: bookedMove(reason, false, true, change, n * u) };
  }
  if (change < 0) {
    const q = Math.max(0, state.q + change);
    const rest = BigInt(state.q) * state.c - n * u;
    const c = q === 0 ? state.c : rest <= 0n ? 0n : divRound(rest, BigInt(q));
    return { state: { q, c }, move: bookedMove(reason, true, true, -change, n * u) };
  }
  return { state };
}

/** One entry that is no reversal; `inboundCost`: the unit cost stock in enters at (see above). */
export function applyWac(
  state: WacState,
  change: number,
  reason: string,
  inboundCost: string,
): { state: WacState; move?: WacMove } {
  if (change > 0) {
    const n = BigInt(change);
    const u = toUnits(inboundCost);
    const c = divRound(BigInt(state.q) * state.c + n * u, BigInt(state.q) + n);
    return { state: { q: state.q + change, c }, move: bookedMove(reason, true, false, change, n * u) };
  }
  if (change < 0) {
    const n = -change;
    const cost = state.c * BigInt(n);
    return {
      state: { q: Math.max(0, state.q - n), c: state.c },
      move: bookedMove(reason, false, false, n, cost),
    };
  }
  return { state };
}
