/**
 * Exact fixed-point arithmetic for analytics: amounts are bigint in units of 1e-4 (unit costs are kept to
 * 4 decimals, money is rounded half-up to 2 decimals only at output). No float ever touches an amount.
 */
export const SCALE = 4;
const ONE = 10n ** BigInt(SCALE);

/** "12.3" / "12.3000" / 12.3 -> 123000n (units of 1e-4). Throws on more than 4 decimals. */
export function toUnits(value: string | number): bigint {
  if (typeof value === 'string') {
    const units = plainUnits(value);
    if (units !== undefined) return BigInt(units);
  }
  const text = typeof value === 'number' ? String(value) : value.trim();
  const match = /^(-)?(\d+)(?:\.(\d{0,4}))?$/.exec(text);
  if (!match) throw new RangeError(`not a decimal with at most ${SCALE} places: ${text}`);
  const units = BigInt(match[2]) * ONE + BigInt((match[3] ?? '').padEnd(SCALE, '0') || '0');
  return match[1] ? -units : units;
}

/**
 * The units of a plain decimal text (digits, then at most 4 decimals after a point) as a number, read digit by
 * digit without a match or part texts (the consumer reads a price per event); undefined for anything else (a
 * sign, spaces, an exponent, more than 4 decimals) or past 15 digits, which toUnits reads the general way.
 */
function plainUnits(text: string): number | undefined {
  const length = text.length;
  if (length === 0 || length > 16) return undefined;
  let units = 0;
  let decimals = -1;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code === 46 /* . */ && decimals < 0 && i > 0) decimals = 0;
    else if (code >= 48 && code <= 57) {
      units = units * 10 + (code - 48);
      if (decimals >= 0 && ++decimals > SCALE) return undefined;
    } else return undefined;
  }
  const digits = decimals < 0 ? length : length - 1;
  if (digits > 15) return undefined;
  for (let d = decimals < 0 ? 0 : decimals; d < SCALE; d++) units *= 10;
  return units <= Number.MAX_SAFE_INTEGER ? units : undefined;
}

const ZERO_TEXT = `0.${'0'.repeat(SCALE)}`;

/** 123000n -> "12.3000" */
export function formatUnits(units: bigint): string {
  if (units === 0n) return ZERO_TEXT;
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
