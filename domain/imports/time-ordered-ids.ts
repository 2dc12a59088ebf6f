/**
 * A version 7 UUID (RFC 9562) as an SQL expression: the Unix time in milliseconds `ms` (a bigint expression),
 * then a 32-bit counter `n` (a bigint expression, 1 upwards) where the RFC puts random bits, then 42 random
 * bits. The ids of one import (one `ms`) sort as their counters, and every later import's after them: inserted
 * in id order, they go to the right-hand end of every index keyed by item id (the items' primary key, the change
 * records by item) instead of to a page at random per row, which for a large file costs more pages than
 * PostgreSQL's buffers hold. NULL when `n` is NULL.
 */
export const timeOrderedUuidSql = (ms: string, n: string): string =>
  `(lpad(to_hex(${ms}), 12, '0')
    || to_hex(${0x7000} | ((${n} >> 20) & ${0xfff}))
    || to_hex(${0x8000} | ((${n} >> 6) & ${0x3fff}))
    || lpad(to_hex(((${n} & 63) << 42) | ((random() * ${2 ** 42})::bigint & ${2 ** 42 - 1})), 12, '0'))::uuid`;
