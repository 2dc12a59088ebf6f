import { ValidationError } from '../shared/errors.js';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface DateParam {
  at: Date;
  /** A plain `yyyy-MM-dd` (as an upper bound it covers the whole day). */
  dateOnly: boolean;
}

/** Parses a `yyyy-MM-dd` date or an ISO-8601 date-time (already shape-checked by the schema). */
export function parseDateParam(value: string): DateParam {
  const dateOnly = DATE_ONLY.test(value);
  return { at: new Date(dateOnly ? `${value}T00:00:00.000Z` : value), dateOnly };
}

const CALENDAR_FIELDS = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2}))?)?/;

/**
 * Whether the date (and time) an ISO-8601 value names exists on the calendar: no 30 February, no hour 24, no
 * minute or second 60. Date parses such values by rolling them over (2026-02-30 is 2 March), so a read would
 * answer for another day than the one asked.
 */
export function isCalendarDate(value: string): boolean {
  const fields = CALENDAR_FIELDS.exec(value);
  // Years that are not four digits (extended or negative years) are outside the supported range: the range
  // check names that, not this one.
  if (!fields) return true;
  const [year, month, day, hour = 0, minute = 0, second = 0] = fields.slice(1).map(f => Number(f ?? 0));
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return (
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59
  );
}

/** A `yyyy-MM-dd` date or an ISO-8601 date-time Date can read (isCalendarDate says whether it exists). */
export const isValidDateParam = (value: string): boolean =>
  (DATE_ONLY.test(value) || /^\d{4}-\d{2}-\d{2}T/.test(value)) &&
  !Number.isNaN(new Date(DATE_ONLY.test(value) ? `${value}T00:00:00.000Z` : value).getTime());

/**
 * The one supported range of every date and date-time parameter (contract, Analytics): 1900-01-01 up to the
 * end of 9999-12-30 (UTC), so that a day added to an upper bound still fits a PostgreSQL timestamp written
 * as `yyyy`. Checked by the schemas, before any SQL.
 */
export const SUPPORTED_DATES = { min: '1900-01-01', max: '9999-12-30' } as const;
const FIRST_MS = Date.parse(`${SUPPORTED_DATES.min}T00:00:00.000Z`);
const AFTER_LAST_MS = Date.parse(`${SUPPORTED_DATES.max}T00:00:00.000Z`) + DAY_MS;

export const isSupportedInstant = (at: Date): boolean => {
  const ms = at.getTime();
  return ms >= FIRST_MS && ms < AFTER_LAST_MS;
};

export const utcDay = (at: Date): string => at.toISOString().slice(0, 10);
export const addDays = (day: string, days: number): string =>
  utcDay(new Date(new Date(`${day}T00:00:00.000Z`).getTime() + days * DAY_MS));

function checkOrder(first: string | Date, second: string | Date, names: [string, string]) {
  if (first > second)
    throw new ValidationError('analytics.range.inverted', { params: { start: names[0], end: names[1] } });
}

/** Days in an inclusive range of UTC days. */
export const daysIn = (range: { start: string; end: string }): number =>
  Math.round(
    (Date.parse(`${range.end}T00:00:00.000Z`) - Date.parse(`${range.start}T00:00:00.000Z`)) / DAY_MS,
  ) + 1;

/**
 * An inclusive range of UTC days; `<start> must be on or before <end>` when inverted, and at most `maxDays`
 * days when given (an answer with one point per day grows with the span).
 */
export function dayRange(
  start: string,
  end: string,
  names: [string, string],
  maxDays?: number,
): { start: string; end: string } {
  const range = { start: utcDay(parseDateParam(start).at), end: utcDay(parseDateParam(end).at) };
  checkOrder(range.start, range.end, names);
  if (maxDays !== undefined && daysIn(range) > maxDays)
    throw new ValidationError('analytics.range.too.long', { params: { max: maxDays } });
  return range;
}

/** A day range with defaults: the last `days` days up to today (UTC). */
export function dayRangeOrDefault(
  start: string | undefined,
  end: string | undefined,
  names: [string, string],
  days = 30,
  now = new Date(),
): { start: string; end: string } {
  const endDay = end ? utcDay(parseDateParam(end).at) : utcDay(now);
  const startDay = start ? utcDay(parseDateParam(start).at) : addDays(endDay, -days);
  checkOrder(startDay, endDay, names);
  return { start: startDay, end: endDay };
}

/**
 * An instant range for history listings: default the last 30 days up to now. A date-only upper bound covers
 * its whole day (`endExclusive`); a date-time upper bound is inclusive.
 */
export function timeRange(
  start: string | undefined | null,
  end: string | undefined | null,
  names: [string, string],
  now = new Date(),
): { from: Date; to: Date; toInclusive: boolean } {
  const upper = end ? parseDateParam(end) : { at: now, dateOnly: false };
  const from = start ? parseDateParam(start).at : new Date(now.getTime() - 30 * DAY_MS);
  if (!upper.dateOnly) {
    checkOrder(from, upper.at, names);
    return { from, to: upper.at, toInclusive: true };
  }
  // A start anywhere within the day of a date-only end is on or before it.
  const to = new Date(upper.at.getTime() + DAY_MS);
  if (from >= to) checkOrder(from, upper.at, names);
  return { from, to, toInclusive: false };
}
