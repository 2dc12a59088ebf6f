import { pendingForSql } from '../../domain/outbox/pending-events.js';
import { expect } from 'chai';
import { testApp } from '../setup/hooks.js';
import { createItem, createSupplier, recordStockChange } from '../support/stock-events.js';
import { ANALYTICS_CONSUMER } from '../../domain/outbox/consumers.js';
import { drainConsumer, OUTBOX_PARTITIONS } from '../../domain/outbox/drain-consumer.js';
import { foldPendingEvents } from '../../domain/analytics/fold/fold-pending-events.js';
import { consumerPool } from '../../domain/outbox/consumer-pool.js';
import type pg from 'pg';
import {
  nativePool,
  nativeTransaction,
  preparedRun,
  type SqlRun,
} from '../../domain/shared/native-transaction.js';

const ALL_PARTITIONS = Array.from({ length: OUTBOX_PARTITIONS }, (_, part) => part);

describe('Held batches (take and read, then writes and markers, on one connection)', () => {
  it('When another run applies events between a batch’s read and its write, then the batch refuses them, reads again and applies the rest once', async () => {
    const em = testApp().services.orm.em.fork();
    await drainConsumer(em, ANALYTICS_CONSUMER, foldPendingEvents, { rebuildShared: true });
    const supplier = await createSupplier(em);
    const item = await createItem(em, { supplierId: supplier.id });
    for (const change of [5, 3, 2])
      await recordStockChange(em, { itemId: item.id, change, reason: 'RESTOCK', at: new Date() });

    // The item's partition, taken the way a run takes its partitions (a session lock), $1-$3 as theirs.
    const take = `select part from (select (hashtext($1::text) & 15)::int as part, $2::int[] as skip, $3::int as ns) p
                   where pg_try_advisory_lock(${ANALYTICS_CONSUMER.lockNamespace}, part)`;
    const client = await (await nativePool(em)).connect();
    try {
      const session = preparedRun(client);
      let reads = 0;
      // Right after the batch has read its events, another run applies the first one (its fold and marker, on
      // another connection): the batch's read is stale, as when a partition changes hands between a statement's
      // snapshot and its lock.
      const run: SqlRun = async (text, params) => {
        const rows = await session(text, params);
        if (reads++ === 0)
          expect(
            await nativeTransaction(em, sql => foldPendingEvents(sql, ALL_PARTITIONS, 1, item.id)),
          ).to.equal(1);
        return rows as never;
      };
      const taken = { parts: [] as number[] };
      const applied = await foldPendingEvents.held!(run, take, [item.id, [], 0], 250, taken);
      expect(applied).to.equal(2);
      expect(taken.parts).to.have.length(1);
    } finally {
      await client.query('select pg_advisory_unlock_all()');
      client.release();
    }
    const [day] = await em.execute<{ entries: number; qty_in: string }[]>(
      'select sum(entries)::int as entries, sum(qty_in)::text as qty_in from analytics_item_day where item_id = ?',
      [item.id],
    );
    expect(day).to.deep.equal({ entries: 3, qty_in: '10' });
    const [left] = await em.execute<{ n: string }[]>(
      `select count(*) as n from outbox_event o where aggregate_id = ? and ${pendingForSql([ANALYTICS_CONSUMER], 'o')}`,
      [item.id],
    );
    expect(Number(left.n)).to.equal(0);
  });

  it('When a held run ends, then its connection holds no advisory lock, the consumers’ pool keeps generic plans and the ORM’s pool plans as before', async () => {
    const em = testApp().services.orm.em.fork();
    const supplier = await createSupplier(em);
    const item = await createItem(em, { supplierId: supplier.id });
    for (const change of [4, -1])
      await recordStockChange(em, { itemId: item.id, change, reason: 'RESTOCK', at: new Date() });
    const result = await drainConsumer(em, ANALYTICS_CONSUMER, foldPendingEvents, { rebuildShared: true });
    expect(result.applied).to.be.at.least(2);

    const [locks] = await em.execute<{ n: string }[]>(
      `select count(*) as n from pg_locks where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())`,
    );
    expect(Number(locks.n)).to.equal(0);
    // The held run's connection (of the consumers' pool) plans generically without sequential scans; every idle
    // connection of the ORM's pool plans as before: no generic plans kept (force_custom_plan once a consumer's
    // fallback used it) and sequential scans allowed.
    const settings = async (pool: pg.Pool) => {
      const clients = await Promise.all(Array.from({ length: pool.idleCount }, () => pool.connect()));
      try {
        return await Promise.all(
          clients.map(async client => {
            const { rows } = await client.query(
              "select current_setting('plan_cache_mode') as mode, current_setting('enable_seqscan') as seqscan",
            );
            return rows[0] as { mode: string; seqscan: string };
          }),
        );
      } finally {
        for (const client of clients) client.release();
      }
    };
    const consumers = await settings(await consumerPool(em));
    expect(consumers).to.have.lengthOf.above(0);
    for (const row of consumers) expect(row).to.deep.equal({ mode: 'force_generic_plan', seqscan: 'off' });
    for (const row of await settings(await nativePool(em))) {
      expect(row.seqscan).to.equal('on');
      expect(row.mode).to.be.oneOf(['auto', 'force_custom_plan']);
    }
  });
});
