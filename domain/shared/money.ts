/**
 * Money is exact: values enter as JSON numbers with at most 2 decimals, live as integer cents in code and as
 * numeric(12,2) in SQL, and leave as JSON numbers. No float is ever summed.
 */

const MONEY_PATTERN = /^-?\d{1,13}(\.\d{1,2})?$/;

/** True when `value` has at most two decimals (checked on its shortest decimal representation). */
export function hasAtMostTwoDecimals(value: number): boolean {
  return Number.isFinite(value) && MONEY_PATTERN.test(normalise(value));
}

function normalise(value: number): string {
  // Number#toString gives the shortest round-trip representation (0.1 -> "0.1", 1e-7 -> "1e-7").
  const text = String(value);
  return /e/i.test(text) ? value.toFixed(20).replace(/0+$/, '').replace(/\.$/, '') : text;
}

/** 12.34 -> 1234. Throws on more than two decimals: validate first. */
export function toCents(value: number): number {
  const text = normalise(value);
  if (!MONEY_PATTERN.test(text)) throw new RangeError(`not a money amount: ${text}`);
  const negative = text.startsWith('-');
  const [whole, fraction = ''] = text.replace('-', '').split('.');
  const cents = Number(whole) * 100 + Number(fraction.padEnd(2, '0'));
  return negative ? -cents : cents;
}

/** SQL numeric text ("12.30") -> cents. */
export function numericToCents(value: string | number): number {
  return toCents(Number(typeof value === 'string' ? value : String(value)));
}

/** 1234 -> 12.34 (a JSON number exact to the cent). */
export function centsToNumber(cents: number | bigint): number {
  return Number(cents) / 100;
}

/** SQL numeric text -> JSON number, exact to the cent (numeric(x,2) text has at most two decimals). */
export function numericToNumber(value: string | number | null | undefined): number {
  if (value === null || value === undefined) return 0;
  return Number(value);
}

/** 1234 -> "12.34": numeric(12,2) text, as PostgreSQL writes it (and an entity's decimal property holds it). */
export function centsToText(cents: number | bigint): string {
  const value = BigInt(cents);
  const sign = value < 0n ? '-' : '';
  const absolute = value < 0n ? -value : value;
  return `${sign}${absolute / 100n}.${String(absolute % 100n).padStart(2, '0')}`;
}

/** A validated amount (at most two decimals) as numeric(12,2) text: 12.3 -> "12.30". */
export const moneyText = (value: number): string => centsToText(toCents(value));

/**
 * numeric(12,2) text times a count, as a JSON number: the exact product in integer cents (never a float
 * product), then the nearest number to it, as PostgreSQL's `(quantity * price)::text` read as a number gives.
 */
export function totalValueOf(price: string, quantity: number): number {
  return Number(centsToText(BigInt(numericToCents(price)) * BigInt(quantity)));
}
