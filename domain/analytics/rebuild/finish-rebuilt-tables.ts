import type { SqlRun } from '../../shared/native-transaction.js';
import { createRebuiltTable, rebuiltIndexes, rebuiltName } from './rollup-tables.js';

/**
 * Rollups a rebuild derives from others once those are complete: `derive` fills the new tables of `tables` from
 * the new tables of `sources` (`table(rollup)` names a rollup's new table).
 */
export interface DerivedRollups {
  tables: string[];
  sources: string[];
  derive: (sql: SqlRun, table: (rollup: string) => string) => Promise<void>;
}

/**
 * Completes the rebuild's new tables once the folded ones (`loaded`) are committed: the derived rollups are
 * filled (each group in a transaction of its own, once its sources are filled), every table gets its indexes
 * (one statement per index, as soon as its table is filled) and then its constraints and statistics (once no
 * statement reads it any more). The statements run on `lanes`, one at a time each, in the order they become
 * possible, the larger first when several are (the order of `derived` and of the indexes): the machine's cores
 * are kept busy whatever the sizes of the tables. `done(finished, total)` after each statement. The tables
 * stay under their new names (the swap renames them); a crash leaves them to the next rebuild's drop.
 */
export async function finishRebuiltTables(
  lanes: SqlRun[],
  loaded: string[],
  derived: DerivedRollups[],
  done: (finished: number, total: number) => void,
): Promise<void> {
  // Each table's indexes, read from its rollup before anything runs (a catalog read each).
  const indexes = new Map<string, Awaited<ReturnType<typeof rebuiltIndexes>>>();
  for (const table of [...loaded, ...derived.flatMap(d => d.tables)])
    indexes.set(table, await rebuiltIndexes(lanes[0], table));
  const filled = new Map<string, Promise<void>>();
  const readers = new Map<string, Promise<void>[]>();
  let total = 0;
  const free = [...lanes];
  const waiting: ((sql: SqlRun) => void)[] = [];
  let finished = 0;
  const schedule = (after: Promise<void>[], run: (sql: SqlRun) => Promise<void>): Promise<void> => {
    total++;
    return Promise.all(after).then(async () => {
      const sql = free.pop() ?? (await new Promise<SqlRun>(resolve => waiting.push(resolve)));
      try {
        await run(sql);
        done(++finished, total);
      } finally {
        const next = waiting.shift();
        if (next) next(sql);
        else free.push(sql);
      }
    });
  };

  const all: Promise<void>[] = [];
  for (const table of loaded) filled.set(table, Promise.resolve());
  for (const group of derived) {
    const fill = schedule(
      group.sources.map(source => filled.get(source)!),
      async sql => {
        await sql('begin');
        for (const table of group.tables) await createRebuiltTable(sql, table);
        await group.derive(sql, rebuiltName);
        await sql('commit');
      },
    );
    for (const source of group.sources) readers.set(source, [...(readers.get(source) ?? []), fill]);
    for (const table of group.tables) filled.set(table, fill);
    all.push(fill);
  }
  const builds = new Map<string, Promise<void>[]>();
  for (const [table, fill] of filled)
    builds.set(
      table,
      indexes
        .get(table)!
        .builds.map(statement => schedule([fill], sql => sql(statement).then(() => undefined))),
    );
  for (const [table, { attaches }] of indexes)
    all.push(
      ...builds.get(table)!,
      schedule([...builds.get(table)!, ...(readers.get(table) ?? [])], async sql => {
        for (const statement of attaches) await sql(statement);
        await sql(`analyze ${rebuiltName(table)}`);
      }),
    );
  const settled = await Promise.allSettled(all);
  const failure = settled.find(result => result.status === 'rejected');
  if (failure) throw failure.reason;
}
