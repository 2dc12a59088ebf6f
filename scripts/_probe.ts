import pg from 'pg';
import { openOrm } from '../config/database.js';
import { executeNative } from '../domain/analytics/native-sql.js';
const url = 'postgres://postgres@127.0.0.1:5432/stockroom_bench';
const orm = await openOrm(url, 4);
const pool = new pg.Pool({ connectionString: url, max: 4 });
const t = async (n: string, f: () => Promise<unknown>) => {
  for (let i = 0; i < 200; i++) await f();
  const s = performance.now();
  for (let i = 0; i < 2000; i++) await f();
  console.log(n, ((performance.now() - s) / 2000).toFixed(3), 'ms');
};
await t('em.execute', () => orm.em.fork().execute('select 1 where 1 = ?', [1]));
await t('executeNative', () => executeNative(orm.em.fork(), 'select 1 where 1 = $1', [1]));
await t('pg pool', () => pool.query('select 1 where 1 = $1', [1]));
await t('em.transactional+2', () => orm.em.fork().transactional(async tx => { await tx.execute('select 1'); await tx.execute('select 2'); }));
await orm.close(true); await pool.end();
