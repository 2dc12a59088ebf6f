/**
 * Exact fixed-point arithmetic for analytics: amounts are bigint in units of 1e-4 (unit costs are kept to
 * 4 decimals, money is rounded half-up to 2 decimals only at output). No float ever touches an amount.
 */
export const SCALE = 4;
const ONE = 10n ** BigInt(SCALE);

/** "12.3" / "12.3000" / 12.3 -> 123000n (units of 1e-4). Throws on more than 4 decimals. */
export function toUnits(value: string | number): bigint {
  const text = typeof value === 'number' ? String(value) : value.trim();
  const match = /^(-)?(\d+)(?:\.(\d{0,4}))?$/.exec(text);
  if (!match) throw new RangeError(`not a decimal with at most ${SCALE} places: ${text}`);
  const units = BigInt(match[2]) * ONE + BigInt((match[3] ?? '').padEnd(SCALE, '0') || '0');
  return match[1] ? -units : units;
}

/** 123000n -> "12.3000" */
export function formatUnits(units: bigint): string {
  const negative = units < 0n;
  const abs = negative ? -units : units;
  const text = `${abs / ONE}.${(abs % ONE).toString().padStart(SCALE, '0')}`;
  return negative ? `-${text}` : text;
}

/** Integer division rounded half away from zero (half-up for the positive amounts of this domain). */
export function divRound(numerator: bigint, denominator: bigint): bigint {
  if (denominator === 0n) throw new RangeError('division by zero');
  const negative = numerator < 0n !== denominator < 0n;
  const n = numerator < 0n ? -numerator : numerator;
  const d = denominator < 0n ? -denominator : denominator;
  const q = (2n * n + d) / (2n * d);
  return negative ? -q : q;
}

/** Units of 1e-4 -> a JSON number rounded half-up to 2 decimals (money). */
export function unitsToMoney(units: bigint): number {
  const cents = divRound(units, 100n);
  return Number(cents) / 100;
}

/** Units of 1e-4 -> a JSON number with 4 decimals (unit costs). */
export function unitsToNumber4(units: bigint): number {
  return Number(formatUnits(units));
}
