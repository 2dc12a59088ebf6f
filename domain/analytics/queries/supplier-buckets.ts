import type { SqlPart } from '../../shared/sql.js';
import { addDays, SUPPORTED_DATES } from '../date-params.js';

/** First day of the month of `day` (yyyy-MM-dd). */
const monthOf = (day: string) => `${day.slice(0, 7)}-01`;
const LAST_MONTH = `${SUPPORTED_DATES.max.slice(0, 7)}-01`;

/**
 * The supplier bucket rows that cover the inclusive day range exactly: its whole months from
 * `analytics_supplier_month`, its ragged ends from `analytics_supplier_day`. Each row has `period` (its day or
 * month start; both lie in the same month) and the columns asked for. A year reads about 12 x suppliers month
 * rows plus the days of at most two partial months, however many events the year holds (x 16 slots at most);
 * without a supplier, the totals' rows of all suppliers.
 */
export function supplierBuckets(
  columns: string[],
  range: { start: string; end: string },
  supplierId: string | null,
): SqlPart {
  // The first whole month starts on `start` or on the first of the next month (a month start + 31 days is in
  // the next month); the whole months end before the month of the day after `end`.
  // In the last supported month (9999-12) no whole month can follow, and the next month is no `yyyy` date.
  const fullTo = monthOf(addDays(range.end, 1));
  const fullFrom = range.start.endsWith('-01')
    ? range.start
    : range.start >= LAST_MONTH
      ? fullTo
      : monthOf(addDays(monthOf(range.start), 31));
  const [from, to] = fullFrom < fullTo ? [fullFrom, fullTo] : [range.start, range.start];
  const cols = columns.join(', ');
  // Without a supplier: the totals over all suppliers (bucket-totals.ts), 16 rows a day or month at most.
  const [months, days, supplier, params] =
    supplierId === null
      ? ['analytics_total_month', 'analytics_total_day', '', []]
      : ['analytics_supplier_month', 'analytics_supplier_day', 'and supplier_key = ?::uuid', [supplierId]];
  return {
    sql: `select month as period, ${cols} from ${months}
          where month >= ?::date and month < ?::date ${supplier}
          union all
          select day as period, ${cols} from ${days}
          where day between ?::date and ?::date and not (day >= ?::date and day < ?::date) ${supplier}`,
    params: [from, to, ...params, range.start, range.end, from, to, ...params],
  };
}
