import { expect } from 'chai';
import { testApp } from '../setup/hooks.js';

/**
 * What only the migrations describe, by design: CHECK constraints, indexes (functional and partial ones among
 * them) and triggers of the entity tables. The set-based SQL's tables (rollups, item changes, deliveries…) have
 * no entity. Everything else of an entity's table — its columns, types, nullability, defaults, generated columns,
 * primary, foreign and unique keys — is described by the entity and must equal what the migrations made.
 */
async function migrationOnlyObjects(tables: string[]): Promise<Set<string>> {
  const rows = await testApp()
    .services.orm.em.fork()
    .execute<{ name: string }[]>(
      `select c.conname as name from pg_constraint c
      where c.contype = 'c' and c.conrelid::regclass::text = any(?::text[])
     union all
     select i.relname from pg_index x join pg_class i on i.oid = x.indexrelid
      where x.indrelid::regclass::text = any(?::text[])
        and not exists (select 1 from pg_constraint c where c.conindid = x.indexrelid)
     union all
     select t.tgname from pg_trigger t where not t.tgisinternal and t.tgrelid::regclass::text = any(?::text[])`,
      [`{${tables.join(',')}}`, `{${tables.join(',')}}`, `{${tables.join(',')}}`],
    );
  return new Set(rows.map(row => row.name));
}

/** The table a statement of MikroORM's diff is about, and the object it names (index, constraint, trigger). */
function subjectOf(statement: string): { table?: string; object?: string } {
  const table =
    /^(?:alter table|create table|drop table(?: if exists)?) "(\w+)"/.exec(statement)?.[1] ??
    / on "(\w+)"/.exec(statement)?.[1];
  const object =
    /^drop index "(\w+)"/.exec(statement)?.[1] ??
    /drop constraint "(\w+)"/.exec(statement)?.[1] ??
    /^drop trigger if exists "(\w+)"/.exec(statement)?.[1];
  return { table, object };
}

describe('Entities: the one description of the schema', () => {
  it('When the database is migrated, then MikroORM finds nothing to change in the entity tables (columns, types, defaults, keys) but what only the migrations describe', async () => {
    const orm = testApp().services.orm;
    const tables = [...orm.getMetadata().getAll().values()].map(meta => meta.tableName);
    const onlyInMigrations = await migrationOnlyObjects(tables);
    const triggerFunctions = new Set(
      [...onlyInMigrations].flatMap(name => tables.map(table => `${table}_${name}_fn`)),
    );
    const diff = await orm.schema.getUpdateSchemaSQL({ wrap: false, dropTables: false });
    const statements = diff
      .split(/;\s*\n/)
      .map(statement => statement.trim().replace(/;$/, ''))
      .filter(statement => statement !== '');
    const disagreements = statements.filter(statement => {
      const fn = /^drop function if exists "(\w+)"\(\)/.exec(statement)?.[1];
      if (fn !== undefined) return !triggerFunctions.has(fn);
      const { table, object } = subjectOf(statement);
      if (object !== undefined && onlyInMigrations.has(object)) return false;
      return table === undefined || tables.includes(table);
    });
    expect(disagreements, 'entity metadata and migrations disagree').to.deep.equal([]);
  });
});
