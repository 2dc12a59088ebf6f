import type { SqlRun } from '../../shared/native-transaction.js';

/** The name of a rollup's table while a rebuild fills it (until the swap gives it the rollup's name). */
export const rebuiltName = (table: string): string => `${table}_rebuild`;

const identifier = (name: string): string => {
  if (!/^[a-z_][a-z0-9_]*$/.test(name) || name.length > 63)
    throw new Error(`not a plain identifier: ${name}`);
  return name;
};

interface IndexDef {
  name: string;
  def: string;
  conname: string | null;
  condef: string | null;
}

const indexesOf = (sql: SqlRun, table: string) =>
  sql<IndexDef>(
    `select c.relname as name, pg_get_indexdef(i.indexrelid) as def, con.conname,
            pg_get_constraintdef(con.oid) as condef
     from pg_index i join pg_class c on c.oid = i.indexrelid
     left join pg_constraint con on con.conindid = i.indexrelid and con.conrelid = i.indrelid
     where i.indrelid = $1::regclass order by c.relname`,
    [table],
  );

/** Drops the new tables a rebuild that did not finish left behind. */
export async function dropRebuiltTables(sql: SqlRun, tables: string[]): Promise<void> {
  for (const table of tables) await sql(`drop table if exists ${identifier(rebuiltName(table))}`);
}

/**
 * Creates a rollup's new table, empty and WITHOUT its indexes: columns, defaults, checks and storage settings
 * (fill factor included) as the rollup's, so rows load without index maintenance (indexRebuiltTable builds the
 * indexes afterwards, a sorted build each).
 */
export async function createRebuiltTable(sql: SqlRun, table: string): Promise<void> {
  const name = identifier(rebuiltName(table));
  await sql(`create table ${name} (like ${identifier(table)} including all excluding indexes)`);
  const [{ options }] = await sql<{ options: string[] | null }>(
    `select reloptions as options from pg_class where oid = $1::regclass`,
    [table],
  );
  if (options?.length) await sql(`alter table ${name} set (${options.join(', ')})`);
}

/**
 * What gives a rollup's new table the rollup's indexes and constraints (named with the new table's suffix):
 * `builds`, one statement per index, which may run at once on other connections (each takes a SHARE lock), and
 * `attaches`, which make the unique indexes of constraints the constraints (a short ACCESS EXCLUSIVE lock each,
 * after every build).
 */
export async function rebuiltIndexes(
  sql: SqlRun,
  table: string,
): Promise<{ builds: string[]; attaches: string[] }> {
  const name = identifier(rebuiltName(table));
  const builds: string[] = [];
  const attaches: string[] = [];
  for (const index of await indexesOf(sql, table)) {
    const match = /^(CREATE (?:UNIQUE )?INDEX )(\S+)( ON (?:ONLY )?)(\S+)( USING .*)$/s.exec(index.def);
    if (!match || match[2] !== index.name) throw new Error(`unexpected index definition: ${index.def}`);
    const indexName = identifier(rebuiltName(index.conname ?? index.name));
    builds.push(`${match[1]}${indexName}${match[3]}${match[4]}_rebuild${match[5]}`);
    if (index.conname === null) continue;
    const kind = /^(PRIMARY KEY|UNIQUE) \(/.exec(index.condef ?? '');
    if (!kind) throw new Error(`unexpected constraint definition: ${index.condef}`);
    attaches.push(`alter table ${name} add constraint ${indexName} ${kind[1]} using index ${indexName}`);
  }
  return { builds, attaches };
}

/** Gives a rollup's new table the rollup's indexes and constraints, one after the other (rebuiltIndexes). */
export async function indexRebuiltTable(sql: SqlRun, table: string): Promise<void> {
  const { builds, attaches } = await rebuiltIndexes(sql, table);
  for (const statement of [...builds, ...attaches]) await sql(statement);
}

/**
 * Puts the new tables in the rollups' places (to run inside the swap's transaction): each rollup is dropped and
 * its new table, its indexes and its constraints take their names, so the migrations and every statement see
 * the same names afterwards. The caller holds the tables' locks (lockRollups).
 */
export async function swapRebuiltTables(sql: SqlRun, tables: string[]): Promise<void> {
  for (const table of tables) {
    // The rollup's own indexes (a long transaction's snapshot may not see the new table's in the catalog).
    const indexes = await indexesOf(sql, table);
    await sql(`drop table ${identifier(table)}`);
    await sql(`alter table ${identifier(rebuiltName(table))} rename to ${identifier(table)}`);
    for (const index of indexes) {
      if (index.conname !== null)
        await sql(
          `alter table ${identifier(table)} rename constraint ${identifier(rebuiltName(index.conname))}
           to ${identifier(index.conname)}`,
        );
      else
        await sql(`alter index ${identifier(rebuiltName(index.name))} rename to ${identifier(index.name)}`);
    }
  }
}

/**
 * Takes the ACCESS EXCLUSIVE locks of the rollups and their new tables for the swap, in one statement that
 * gives up after `lock_timeout` (the caller's, shorter than deadlock_timeout): a reader that holds one rollup and
 * waits for another then never meets the swap in a deadlock; the caller tries again.
 */
export const lockRollups = (sql: SqlRun, tables: string[]): Promise<unknown[]> =>
  sql(
    `lock table ${tables.flatMap(t => [identifier(t), identifier(rebuiltName(t))]).join(', ')} in access exclusive mode`,
  );
