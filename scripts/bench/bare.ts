import express from 'express';
import pg from 'pg';
import { ITEM_COLUMNS, ITEM_FROM, toItemView, type ItemRow } from '../../domain/inventory/item.view.js';
import { ADJUST_SQL } from '../../domain/inventory/adjust-quantity.js';
import { withNumberedParams } from '../../domain/shared/pool-query.js';

/**
 * The bench's baseline, run as its own process: bare Express 5 + pg doing the same SQL as Stockroom's GET and
 * PATCH of one item (no auth, no validation, no logging, no ORM), as prepared statements like Stockroom's hot
 * paths (unprepared, PostgreSQL would parse and plan every query of the baseline only, which flatters the
 * ratio). Env: DATABASE_URL, PORT, DB_POOL_MAX, BENCH_BARE_WRITE.
 */
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DB_POOL_MAX ?? 10),
});
const app = express();

app.get('/api/inventory/:id', async (req, res) => {
  const { rows } = await pool.query<ItemRow>({
    name: 'bare_get_item',
    text: `select ${ITEM_COLUMNS} from ${ITEM_FROM} where i.id = $1`,
    values: [req.params.id],
  });
  if (rows.length === 0) res.status(404).end();
  else res.json(toItemView(rows[0]));
});

/**
 * The PATCH as Stockroom writes it: its own adjust statement (the guarded update, the item-change record, the
 * outbox event and its pending rows, one round trip), so the ratio measures everything around the SQL.
 * BENCH_BARE_WRITE=minimal runs the earlier baseline instead: a plain update and an event row without pending
 * rows or item-change record, in a transaction of four round trips.
 */
const adjustText = withNumberedParams(ADJUST_SQL);
const sameWrite = async (req: express.Request, res: express.Response) => {
  const { rows } = await pool.query<ItemRow>({
    name: 'bare_adjust_same',
    text: adjustText,
    values: [Number(req.query.delta), req.params.id, null, null, req.query.reason, 'bench', null, null],
  });
  if (rows.length === 0) res.status(404).end();
  else res.json(toItemView(rows[0]));
};

const minimalWrite = async (req: express.Request, res: express.Response) => {
  const delta = Number(req.query.delta);
  const client = await pool.connect();
  try {
    await client.query('begin');
    const { rows } = await client.query<{ id: string; name: string; quantity: number }>({
      name: 'bare_adjust_item',
      text: 'update inventory_item set quantity = quantity + $1, version = version + 1, updated_at = now() where id = $2 and quantity + $1 >= 0 returning id, name, quantity',
      values: [delta, req.params.id],
    });
    await client.query({
      name: 'bare_insert_event',
      text: `insert into outbox_event (type, aggregate_id, payload) values ('bench.bare', $1, $2::jsonb)`,
      values: [
        req.params.id,
        JSON.stringify({
          itemId: req.params.id,
          itemName: rows[0]?.name,
          change: delta,
          quantityAfter: rows[0]?.quantity,
        }),
      ],
    });
    await client.query('commit');
    res.json(rows[0]);
  } catch (error) {
    await client.query('rollback');
    throw error;
  } finally {
    client.release();
  }
};

app.patch(
  '/api/inventory/:id/quantity',
  process.env.BENCH_BARE_WRITE === 'minimal' ? minimalWrite : sameWrite,
);

app.get('/api/health', (_req, res) => res.json({ status: 'ok' }));

const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
const stop = () => server.close(() => void pool.end().then(() => process.exit(0)));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
