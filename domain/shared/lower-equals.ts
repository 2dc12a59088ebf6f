import { sql } from '@mikro-orm/postgresql';

/**
 * A filter of the unit of work: `lower(column) = lower(value)`, case-insensitively as a unique index on
 * `lower(column)` compares (names, skus).
 */
export const lowerEquals = (column: string, value: string) => ({ [sql.lower(column)]: sql`lower(${value})` });
