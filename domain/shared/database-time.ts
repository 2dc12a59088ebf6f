import { sql } from '@mikro-orm/postgresql';

/**
 * Times an entity's timestamps take from PostgreSQL's clock, not the web process's: SQL the unit of work writes
 * into its insert or update and reads back (RETURNING), so the entity holds the stored value after the flush.
 * Every writer of a table (set-based SQL and the unit of work) then stamps it from one clock.
 */

/**
 * The time the writing statement arrived (`statement_timestamp()`): after every row lock an earlier statement of
 * the transaction took, and one value for every column of the statement (created_at = updated_at on insert).
 */
export const statementTime = (): Date => sql`statement_timestamp()`;

/** The transaction's start (`now()`). */
export const transactionTime = (): Date => sql`now()`;
