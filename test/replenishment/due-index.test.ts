import { expect } from 'chai';
import { ownDatabase, testApp } from '../setup/hooks.js';
import { nativeTransaction } from '../../domain/shared/native-transaction.js';
import { datedIds, dueCount } from '../../domain/replenishment/page-suggestions.js';

/**
 * The suggestions reads only due items through the partial indexes of migration ReplenishmentDue: PostgreSQL uses them only
 * while the queries' predicate and order key are the indexes' own expressions (due-items.ts against the
 * migration's text). With sequential scans and sorts priced out, a query that no longer matches shows them.
 */
describe('Replenishment: R1 reads the due index', () => {
  // The plans are checked on tables only this suite has filled (other suites' rows change the statistics).
  ownDatabase('due_index');
  const planOf = (text: string, params: unknown[]) =>
    nativeTransaction(testApp().services.orm.em.fork(), async sql => {
      // Priced out: a plan that cannot use the index (or its order) shows them anyway.
      for (const setting of ['enable_seqscan', 'enable_sort', 'enable_bitmapscan'])
        await sql(`set local ${setting} = off`);
      const rows = await sql<{ 'QUERY PLAN': string }>(`explain ${text}`, params);
      return rows.map(r => r['QUERY PLAN']).join('\n');
    });

  it('When R1 counts and pages the due items, with and without a supplier, then the plans use the due indexes', async () => {
    const supplier = '00000000-0000-4000-8000-000000000001';
    expect(await planOf(dueCount(false, false), [null])).to.match(
      /Index Only Scan using inventory_item_replenishment_due/,
    );
    expect(await planOf(dueCount(true, true), [supplier, 7])).to.match(
      /Index (Only )?Scan using inventory_item_replenishment_due_supplier_idx/,
    );
    const paged = await planOf(datedIds(false), [null, 2_900_000, 2_900_000, 50, 0]);
    expect(paged).to.match(/Index Scan using inventory_item_replenishment_due_idx/);
    expect(paged).not.to.match(/Sort/);
    const bySupplier = await planOf(datedIds(true), [supplier, 2_900_000, 7, 50, 0]);
    expect(bySupplier).to.match(/Index Scan using inventory_item_replenishment_due_supplier_idx/);
    expect(bySupplier).not.to.match(/Sort/);
  });
});
