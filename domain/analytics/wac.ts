import { divRound, toUnits } from './decimal.js';

/**
 * The weighted-average-cost algorithm of the contract, one event at a time, per item in event order,
 * starting at (q = 0, c = 0). Amounts are bigint units of 1e-4.
 *
 * inbound n at unit cost u (priceAtChange): c' = round4((q*c + n*u) / (q + n)), q' = q + n;
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

export function applyWac(
  state: WacState,
  change: number,
  reason: string,
  priceAtChange: string,
): { state: WacState; move?: WacMove } {
  if (change > 0) {
    const n = BigInt(change);
    const u = toUnits(priceAtChange);
    const c = divRound(BigInt(state.q) * state.c + n * u, BigInt(state.q) + n);
    const move: WacMove = {
      bucket: reason === 'RETURN' ? 'returnsIn' : 'purchases',
      qty: change,
      cost: n * u,
    };
    return { state: { q: state.q + change, c }, move };
  }
  if (change < 0) {
    const n = -change;
    const cost = state.c * BigInt(n);
    const next = { q: Math.max(0, state.q - n), c: state.c };
    if (reason === 'RETURNED_TO_SUPPLIER')
      return { state: next, move: { bucket: 'purchases', qty: -n, cost: -cost } };
    if (WRITE_OFF_REASONS.has(reason)) return { state: next, move: { bucket: 'writeOff', qty: n, cost } };
    return { state: next, move: { bucket: 'cogs', qty: n, cost } };
  }
  return { state };
}
