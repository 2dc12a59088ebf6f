import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { newItem, newSupplier } from '../support/inventory.js';
import { waitFor } from '../support/wait-for.js';
import { nativeTransaction } from '../../domain/shared/native-transaction.js';
import { adjustQuantity } from '../../domain/inventory/adjust-quantity.js';
import { encodeChangeCursor } from '../../domain/inventory/item-changes-feed.js';

interface Change {
  itemId: string;
  kind: string;
  version: number;
  at: string;
}

/** A sync client: polls the feed with its cursor and keeps everything it was handed, in order. */
class Reader {
  seen: Change[] = [];
  constructor(
    private auth: string,
    public cursor?: string,
  ) {}

  async poll(limit = 50): Promise<Change[]> {
    const query = new URLSearchParams({
      limit: String(limit),
      ...(this.cursor ? { since: this.cursor } : {}),
    });
    const res = await api()
      .get(`/api/inventory/changes?${query}`)
      .set('Authorization', this.auth)
      .expect(200);
    this.cursor = res.body.next;
    this.seen.push(...res.body.changes);
    return res.body.changes;
  }

  /** Polls until a page comes back short: everything handed out so far has been read. */
  async catchUp(): Promise<void> {
    while ((await this.poll(1000)).length === 1000);
  }

  of(itemIds: string[]): Change[] {
    return this.seen.filter(c => itemIds.includes(c.itemId));
  }
}

const versionsOf = async (itemIds: string[]) =>
  testApp()
    .services.orm.em.fork()
    .execute<{ item_id: string; version: number }[]>(
      "select item_id, version from item_change where item_id = any(string_to_array(?, ',')::uuid[])",
      [itemIds.join(',')],
    );

/** Every change of the items handed out exactly once, and each item's in version order. */
function expectExactlyOnceInOrder(seen: Change[], stored: { item_id: string; version: number }[]) {
  const keys = seen.map(c => `${c.itemId}/${c.version}`);
  expect(new Set(keys).size, 'no change repeated').to.equal(keys.length);
  expect([...keys].sort()).to.deep.equal(stored.map(r => `${r.item_id}/${r.version}`).sort());
  const last = new Map<string, number>();
  for (const c of seen) {
    expect(c.version, `versions of ${c.itemId} in order`).to.be.greaterThan(last.get(c.itemId) ?? 0);
    last.set(c.itemId, c.version);
  }
}

describe('Ledger: incremental sync (GET /api/inventory/changes)', function () {
  this.timeout(120000);
  let admin: TestUser;
  let user: TestUser;
  let supplierId: string;

  before(async () => {
    admin = await createUser(testApp().services, 'ROLE_ADMIN', 'admin');
    user = await createUser(testApp().services, 'ROLE_USER');
    supplierId = (await newSupplier(api(), admin.auth)).id;
  });

  it('When items are created, changed and deleted, then a reader gets created/updated/deleted with their versions, once', async () => {
    const reader = new Reader(user.auth);
    await reader.catchUp();
    const item = await newItem(api(), admin.auth, supplierId, { quantity: 0 });
    await api()
      .patch(`/api/inventory/${item.id}/price?price=9.99`)
      .set('Authorization', admin.auth)
      .expect(200);
    await api().delete(`/api/inventory/${item.id}?reason=LOST`).set('Authorization', admin.auth).expect(204);
    await waitFor(
      async () => (await reader.poll()).length > 0 && reader.of([item.id]).length >= 3,
      60000,
      'feed',
    );
    await reader.catchUp();
    expect(reader.of([item.id]).map(c => [c.kind, c.version])).to.deep.equal([
      ['created', 1],
      ['updated', 2],
      ['deleted', 3],
    ]);
    expect(reader.of([item.id])[0].at).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('When a transaction that started first commits last, then no later change is handed out before it commits', async () => {
    const [a, b] = [
      await newItem(api(), admin.auth, supplierId, { quantity: 5 }),
      await newItem(api(), admin.auth, supplierId, { quantity: 5 }),
    ];
    const reader = new Reader(user.auth);
    // Read up to both creations (handed out once every transaction before them has ended), then watch.
    await waitFor(
      async () => (await reader.catchUp(), reader.of([a.id, b.id]).length === 2),
      60000,
      'creations',
    );
    reader.seen = [];
    const em = testApp().services.orm.em;
    const context = { user: 'writer', correlationId: null };
    let releaseA!: () => void;
    const aMayCommit = new Promise<void>(resolve => (releaseA = resolve));
    let aWrote!: () => void;
    const aHasWritten = new Promise<void>(resolve => (aWrote = resolve));
    // Writer A takes its transaction id and writes first, then holds its transaction open.
    const writerA = nativeTransaction(em, async sql => {
      await adjustQuantity(sql, { id: a.id, delta: 1, reason: 'RESTOCK' }, context);
      aWrote();
      await aMayCommit;
    });
    await aHasWritten;
    // Writer B starts later and commits at once: its change has the later transaction id.
    try {
      await nativeTransaction(em, sql =>
        adjustQuantity(sql, { id: b.id, delta: 1, reason: 'RESTOCK' }, context),
      );
      for (let i = 0; i < 5; i++) {
        await reader.poll();
        expect(reader.of([a.id, b.id]), 'nothing past the open transaction').to.deep.equal([]);
      }
    } finally {
      releaseA();
      await writerA;
    }
    await waitFor(async () => (await reader.poll(), reader.of([a.id, b.id]).length === 2), 60000, 'both');
    expect(reader.of([a.id, b.id]).map(c => c.itemId)).to.deep.equal([a.id, b.id]);
  });

  it('When two writers run overlapping transactions while a reader polls, then the reader sees every change exactly once, each item in version order', async () => {
    const items = await Promise.all(
      [1, 2, 3].map(() => newItem(api(), admin.auth, supplierId, { quantity: 1000 })),
    );
    const ids = items.map(i => i.id);
    const reader = new Reader(user.auth);
    await reader.catchUp();
    const em = testApp().services.orm.em;
    let writing = true;
    const writer = async (w: number) => {
      for (let n = 0; n < 40; n++) {
        await nativeTransaction(em, async sql => {
          // One or two changes per transaction, held open a little while the other writer commits.
          for (let k = 0; k <= (n + w) % 2; k++)
            await adjustQuantity(
              sql,
              { id: ids[(n + k + w) % ids.length], delta: k === 0 ? -1 : 1, reason: 'SALE' },
              { user: `writer-${w}`, correlationId: null },
            );
          await new Promise(resolve => setTimeout(resolve, (n * 7 + w * 3) % 11));
        });
      }
    };
    const polling = (async () => {
      while (writing) await reader.poll(7);
    })();
    await Promise.all([writer(0), writer(1)]);
    writing = false;
    await polling;
    const stored = await versionsOf(ids);
    await waitFor(async () => (await reader.catchUp(), reader.of(ids).length >= stored.length), 60000, 'all');
    expectExactlyOnceInOrder(reader.of(ids), stored);
  });

  it('When the cursor is malformed, expired or the limit out of bounds, then 400 / 410 in the error shape (localized)', async () => {
    const now = Date.now();
    for (const since of [
      'nope',
      '!!',
      encodeChangeCursor({ xid: '1', id: '1', issuedAt: 1 }).slice(0, 4),
      // Beyond 64 bits, beyond every transaction id handed out yet, beyond a bigint, issued tomorrow.
      encodeChangeCursor({ xid: '18446744073709551616', id: '1', issuedAt: now }),
      encodeChangeCursor({ xid: '18446744073709551615', id: '1', issuedAt: now }),
      encodeChangeCursor({ xid: '1', id: '9223372036854775808', issuedAt: now }),
      encodeChangeCursor({ xid: '1', id: '1', issuedAt: now + 86_400_000 }),
    ])
      expect(
        (
          await api()
            .get(`/api/inventory/changes?since=${encodeURIComponent(since)}`)
            .set('Authorization', user.auth)
            .expect(400)
        ).body.messageKey,
      ).to.equal('inventory.changes.cursor.invalid');
    const old = encodeChangeCursor({ xid: '1', id: '1', issuedAt: Date.now() - 31 * 86_400_000 });
    const gone = await api()
      .get(`/api/inventory/changes?since=${old}&lang=de`)
      .set('Authorization', user.auth)
      .expect(410);
    expect(gone.body).to.include({
      error: 'gone',
      status: 410,
      messageKey: 'inventory.changes.cursor.expired',
    });
    expect(gone.body.message).to.contain('30 Tage');
    const fresh = encodeChangeCursor({ xid: '1', id: '1', issuedAt: Date.now() - 29 * 86_400_000 });
    await api()
      .get(`/api/inventory/changes?since=${fresh}&limit=1`)
      .set('Authorization', user.auth)
      .expect(200);
    for (const limit of ['0', '1001', 'x'])
      await api().get(`/api/inventory/changes?limit=${limit}`).set('Authorization', user.auth).expect(400);
    await api().get('/api/inventory/changes').expect(401);
  });
});
