import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import { api, testApp } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { newItem, newSupplier } from '../support/inventory.js';
import { waitForHistorySettled } from '../support/settle.js';
import { startWorkers, type RunningWorkers } from '../../workers/main.js';

const REASONS = ['SALE', 'RESTOCK', 'DAMAGED', 'PRICE_CHANGE', 'RETURN'];
const START = Date.parse('2026-01-28T00:00:00Z');
const SPAN_MS = 70 * 86_400_000;

interface Entry {
  id: string;
  timestamp: string;
  change: number;
}

const sql = <T>(text: string, params: unknown[] = []) =>
  testApp().services.orm.em.fork().execute<T[]>(text, params);

/**
 * Appends `n` history entries in SQL for `items` (spread over 70 days from START, reasons, changes with ties,
 * names and suppliers as given), the way any writer appends them; outbox ids far above the real ones.
 */
async function appendEntries(items: { id: string; name: string; supplierId: string | null }[], n: number) {
  await sql(
    `insert into stock_history (outbox_event_id, item_id, item_name, supplier_id, supplier_name, change,
       quantity_before, quantity_after, reason, price_at_change, created_by, "timestamp")
     select 9000000000000000 + (random() * 900000000000000)::bigint + g, (i->>'id')::uuid, i->>'name',
       (i->>'supplierId')::uuid, 'S', (g % 7) - 3, 10, 10 + (g % 7) - 3,
       (string_to_array(?, ','))[1 + g % ${REASONS.length}], 1.5, 'filler',
       to_timestamp(? / 1000.0) + (random() * ? || ' milliseconds')::interval
     from generate_series(1, ?) g, lateral (select ?::jsonb -> (g % ?)::int as i) x`,
    [REASONS.join(','), START, SPAN_MS, n, JSON.stringify(items), items.length],
  );
}

/** Follows `Link: <...>; rel="next"` from `first` to the end; returns every page body. */
async function walk(auth: string, first: string) {
  const pages: any[] = [];
  let url: string | undefined = first;
  while (url) {
    if (pages.length > 1000)
      throw new Error(`no end after 1000 pages: ${JSON.stringify(pages[999].content.slice(0, 2))}`);
    const res = await api().get(url).set('Authorization', auth).expect(200);
    pages.push(res.body);
    const link = res.headers.link as string | undefined;
    url = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1] : undefined;
    if (!url) expect(res.body.last).to.equal(true);
  }
  return pages;
}

describe('History paging: cursors, exact totals, H2/H3 pages', () => {
  let admin: TestUser;
  let user: TestUser;
  let workers: RunningWorkers;

  before(async () => {
    admin = await createUser(testApp().services, 'ROLE_ADMIN', 'admin');
    user = await createUser(testApp().services, 'ROLE_USER');
    workers = startWorkers(testApp().services, { clock: false });
  });
  after(async () => workers.close());

  it('When walking by cursor while entries are written, then every entry visible at the first page appears once and nothing else', async function () {
    this.timeout(120000);
    const supplier = await newSupplier(api(), admin.auth);
    const item = await newItem(api(), admin.auth, supplier.id, { quantity: 1000 });
    await waitForHistorySettled(testApp().services);

    // A writer in progress at the first page: its entry (older than all others, so in the part not yet walked;
    // a month and reason of its own, so no count row is shared) draws its id before the entries below but commits after
    // the first page, and must stay out of the walk.
    let release!: () => void;
    const firstPageRead = new Promise<void>(resolve => (release = resolve));
    let inserted!: () => void;
    const lateInserted = new Promise<void>(resolve => (inserted = resolve));
    const em = testApp().services.orm.em.fork();
    const late = em.transactional(async tx => {
      await tx.execute(
        `insert into stock_history (outbox_event_id, item_id, item_name, supplier_id, supplier_name, change,
           quantity_before, quantity_after, reason, price_at_change, created_by, "timestamp")
         values (8999999999999999, ?, ?, ?, 'S', 1, 1, 2, 'INVENTORY_COUNT', 1, 'late', ?)`,
        [item.id, item.name, supplier.id, new Date(START - 40 * 86_400_000).toISOString()],
      );
      inserted();
      await firstPageRead;
    });
    await lateInserted;
    await appendEntries([{ id: item.id, name: item.name, supplierId: supplier.id }], 3000);

    for (const [path, sort] of [
      [`/api/stock-history/search?supplierId=${supplier.id}&size=97`, ''],
      [`/api/stock-history/item/${item.id}?size=200`, '&sort=change,asc'],
    ] as const) {
      await waitForHistorySettled(testApp().services);
      const visible = await sql<{ id: string }>(
        'select id::text as id from stock_history where supplier_id = ?',
        [supplier.id],
      );
      const firstUrl = `${path}${sort}`;
      const first = await api().get(firstUrl).set('Authorization', user.auth).expect(200);
      release();
      // Writes during the walk: adjustments through the API (the history consumer appends them) and entries
      // with timestamps all over the range.
      const writes = (async () => {
        for (let i = 0; i < 20; i++)
          await api()
            .patch(`/api/inventory/${item.id}/quantity?delta=1&reason=RESTOCK`)
            .set('Authorization', user.auth)
            .expect(200);
        await appendEntries([{ id: item.id, name: item.name, supplierId: supplier.id }], 500);
      })();
      const pages = [first.body, ...(await walk(user.auth, /^<([^>]+)>/.exec(first.headers.link)![1]))];
      await writes;
      await late;
      const seen = pages.flatMap(p => p.content.map((e: Entry) => e.id));
      expect(new Set(seen).size, 'no entry repeated').to.equal(seen.length);
      expect([...seen].sort()).to.deep.equal(visible.map(r => r.id).sort());
      for (const [i, p] of pages.entries()) {
        expect(p.number).to.equal(i);
        expect(p.totalElements).to.equal(visible.length);
      }
      // The order is the requested one, ties broken by id.
      const entries: Entry[] = pages.flatMap(p => p.content);
      for (let i = 1; i < entries.length; i++) {
        const [a, b] = [entries[i - 1], entries[i]];
        const ordered = sort
          ? a.change < b.change || (a.change === b.change && BigInt(a.id) < BigInt(b.id))
          : a.timestamp >= b.timestamp;
        expect(ordered, `order at ${i}`).to.equal(true);
      }
    }
  });

  it('When totals are asked for random filter combinations, then they equal count(*) of the history', async function () {
    this.timeout(120000);
    const suppliers = [await newSupplier(api(), admin.auth), await newSupplier(api(), admin.auth)];
    const tag = randomUUID().slice(0, 6);
    const items = Array.from({ length: 6 }, (_, i) => ({
      id: randomUUID(),
      name: `Tot ${tag} ${i % 3 === 0 ? 'bolt' : 'nut'} ${i}`,
      supplierId: i === 5 ? null : suppliers[i % 2].id,
    }));
    // A renamed item: its older entries carry another name.
    items.push({ ...items[1], name: `Tot ${tag} renamed` });
    await appendEntries(items, 4000);
    await waitForHistorySettled(testApp().services);
    const instant = fc.oneof(
      fc.integer({ min: START - 86_400_000, max: START + SPAN_MS + 86_400_000 }),
      fc.integer({ min: 0, max: 75 }).map(d => START + d * 86_400_000),
      fc.constantFrom(Date.parse('2026-02-01T00:00:00Z'), Date.parse('2026-03-31T23:59:59.999Z')),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            startDate: instant,
            endDate: instant,
            itemName: fc.constantFrom(`${tag} bolt`, `${tag} nut`, `${tag}`, `${tag} RENAMED`, 'nothing'),
            supplierId: fc.constantFrom(...suppliers.map(s => s.id)),
            item: fc.nat({ max: items.length - 1 }),
            reason: fc.constantFrom(...REASONS, 'SOLD'),
          },
          { requiredKeys: [] },
        ),
        async f => {
          const [start, end] = [f.startDate, f.endDate].map(t => t && new Date(t).toISOString());
          if (start && end && end < start) return;
          const params = new URLSearchParams({ size: '5' });
          if (start) params.set('startDate', start);
          if (end) params.set('endDate', end);
          if (f.itemName) params.set('itemName', f.itemName);
          if (f.supplierId) params.set('supplierId', f.supplierId);
          const search = await api()
            .get(`/api/stock-history/search?${params}`)
            .set('Authorization', user.auth)
            .expect(200);
          const [{ n }] = await sql<{ n: string }>(
            `select count(*) as n from stock_history where (?::timestamptz is null or "timestamp" >= ?::timestamptz)
               and (?::timestamptz is null or "timestamp" <= ?::timestamptz)
               and (?::text is null or item_name ilike '%' || ? || '%')
               and (?::uuid is null or supplier_id = ?::uuid)`,
            [
              start ?? null,
              start ?? null,
              end ?? null,
              end ?? null,
              f.itemName ?? null,
              f.itemName ?? null,
            ].concat([f.supplierId ?? null, f.supplierId ?? null]),
          );
          expect(search.body.totalElements, JSON.stringify(f)).to.equal(Number(n));
          expect(search.body.page.totalElements).to.equal(Number(n));

          const itemId = items[f.item ?? 0].id;
          const byItem = await api()
            .get(`/api/stock-history/item/${itemId}?size=3`)
            .set('Authorization', user.auth)
            .expect(200);
          const [{ m }] = await sql<{ m: string }>(
            'select count(*) as m from stock_history where item_id = ?',
            [itemId],
          );
          expect(byItem.body.totalElements).to.equal(Number(m));
          if (f.reason) {
            const byReason = await api()
              .get(`/api/stock-history/reason/${f.reason}?size=3`)
              .set('Authorization', user.auth)
              .expect(200);
            const reason = f.reason === 'SOLD' ? 'SALE' : f.reason;
            const [{ r }] = await sql<{ r: string }>(
              'select count(*) as r from stock_history where reason = ?',
              [reason],
            );
            expect(byReason.body.totalElements).to.equal(Number(r));
          }
        },
      ),
      { numRuns: 60 },
    );
    const [{ all }] = await sql<{ all: string }>('select count(*) as all from stock_history');
    const h1 = await api().get('/api/stock-history?size=1').set('Authorization', user.auth).expect(200);
    expect(h1.body.totalElements).to.equal(Number(all));
  });

  it('When a deep page is asked for by number, then it holds the entries at that offset (found from the count rows)', async () => {
    const supplier = await newSupplier(api(), admin.auth);
    await appendEntries(
      [{ id: randomUUID(), name: `Deep ${randomUUID().slice(0, 6)}`, supplierId: supplier.id }],
      2500,
    );
    for (const [url, where, params] of [
      ['/api/stock-history?size=50&page=', '', []],
      [
        `/api/stock-history/search?supplierId=${supplier.id}&size=50&page=`,
        'where supplier_id = ?',
        [supplier.id],
      ],
      ['/api/stock-history/reason/SALE?size=50&page=', "where reason = 'SALE'", []],
    ] as const) {
      const [{ n }] = await sql<{ n: string }>(`select count(*) as n from stock_history ${where}`, [
        ...params,
      ]);
      for (const page of [20, 33, Math.floor(Number(n) / 50), Math.floor(Number(n) / 50) + 1]) {
        const res = await api().get(`${url}${page}`).set('Authorization', user.auth).expect(200);
        const expected = await sql<{ id: string }>(
          `select id::text as id from stock_history ${where} order by "timestamp" desc, id asc limit 50 offset ?`,
          [...params, page * 50],
        );
        expect(
          res.body.content.map((e: Entry) => e.id),
          `${url}${page}`,
        ).to.deep.equal(expected.map(r => r.id));
        expect(res.body.totalElements).to.equal(Number(n));
        // Its Link goes on from there.
        const more = await sql<{ id: string }>(
          `select id::text as id from stock_history ${where} order by "timestamp" desc, id asc limit 50 offset ?`,
          [...params, (page + 1) * 50],
        );
        expect(res.headers.link === undefined, 'a Link exactly when entries follow').to.equal(
          more.length === 0,
        );
        if (more.length > 0) {
          const next = await api()
            .get(/^<([^>]+)>/.exec(res.headers.link)![1])
            .set('Authorization', user.auth)
            .expect(200);
          expect(next.body.content.map((e: Entry) => e.id)).to.deep.equal(more.map(r => r.id));
          expect(next.body.number).to.equal(page + 1);
        }
      }
    }
  });

  it('When deep pages fall in a dense day (entries on and across hour boundaries), then they hold the entries at their offset, also after a reversal and an item deletion', async function () {
    this.timeout(120000);
    const supplierId = (await newSupplier(api(), admin.auth)).id;
    const kept = await newItem(api(), admin.auth, supplierId, { quantity: 50 });
    const deleted = await newItem(api(), admin.auth, supplierId, { quantity: 0 });
    await api()
      .patch(`/api/inventory/${kept.id}/quantity?delta=-3&reason=SALE`)
      .set('Authorization', admin.auth)
      .expect(200);
    await waitForHistorySettled(testApp().services);
    // 3,000 entries in 30 hours of one day and the next: every tenth exactly on an hour boundary (ties of one
    // timestamp across the boundary's buckets), the rest on whole minutes (ties within an hour).
    const dense = Date.parse('2026-05-10T09:00:00Z');
    await sql(
      `insert into stock_history (outbox_event_id, item_id, item_name, supplier_id, supplier_name, change,
         quantity_before, quantity_after, reason, price_at_change, created_by, "timestamp")
       select 8000000000000000 + g, (case when g % 2 = 0 then ? else ? end)::uuid, 'Dense', ?::uuid, 'S', 1, 10, 11,
         'RESTOCK', 1.5, 'filler',
         to_timestamp(? / 1000.0) + case when g % 10 = 0 then ((g / 10) % 30) * interval '1 hour'
                                         else (g % 1800) * interval '1 minute' end
       from generate_series(1, 3000) g`,
      [kept.id, deleted.id, supplierId, dense],
    );
    const check = async (label: string) => {
      const [{ newer, n }] = await sql<{ newer: string; n: string }>(
        `select count(*) filter (where "timestamp" >= to_timestamp(? / 1000.0) + interval '30 hours') as newer,
                count(*) as n from stock_history`,
        [dense],
      );
      const pages = [0, 7, 13, 24, 31, 45, 59].map(k => Math.floor((Number(newer) + k * 50) / 50));
      for (const page of [...pages, 20, Math.floor(Number(n) / 50)]) {
        for (const url of [
          `/api/stock-history?size=50&page=${page}`,
          `/api/stock-history/search?size=50&page=${page}`,
        ]) {
          const res = await api().get(url).set('Authorization', user.auth).expect(200);
          const expected = await sql<{ id: string }>(
            `select h.id::text as id from stock_history h order by h."timestamp" desc, h.id asc limit 50 offset ?`,
            [page * 50],
          );
          expect(
            res.body.content.map((e: Entry) => e.id),
            `${label}: ${url}`,
          ).to.deep.equal(expected.map(r => r.id));
          expect(res.body.totalElements, `${label}: ${url}`).to.equal(Number(n));
        }
      }
    };
    await check('written');
    const [sale] = await sql<{ id: string }>(
      `select id::text as id from stock_history where item_id = ? and reason = 'SALE'`,
      [kept.id],
    );
    await api().post(`/api/stock-history/${sale.id}/reverse`).set('Authorization', admin.auth).expect(201);
    await api()
      .delete(`/api/inventory/${deleted.id}?reason=LOST`)
      .set('Authorization', admin.auth)
      .expect(204);
    await waitForHistorySettled(testApp().services);
    await check('after a reversal and a deletion');
  });

  it('When H2 and H3 get a size, then Spring pages with cursors; without it the whole array; bad cursors are 400', async () => {
    const supplier = await newSupplier(api(), admin.auth);
    const item = await newItem(api(), admin.auth, supplier.id, { quantity: 50 });
    for (let i = 0; i < 4; i++)
      await api()
        .patch(`/api/inventory/${item.id}/quantity?delta=-1&reason=DAMAGED`)
        .set('Authorization', user.auth)
        .expect(200);
    await waitForHistorySettled(testApp().services);
    const all = await api()
      .get(`/api/stock-history/item/${item.id}`)
      .set('Authorization', user.auth)
      .expect(200);
    expect(all.body).to.be.an('array').with.length(5);
    const page = await api()
      .get(`/api/stock-history/item/${item.id}?size=2&page=1`)
      .set('Authorization', user.auth)
      .expect(200);
    expect(page.body).to.include({ totalElements: 5, totalPages: 3, number: 1, size: 2, last: false });
    expect(page.body.content.map((e: Entry) => e.id)).to.deep.equal(
      all.body.slice(2, 4).map((e: Entry) => e.id),
    );
    const next = /^<([^>]+)>; rel="next"$/.exec(page.headers.link)![1];
    expect(next).to.match(new RegExp(`^/api/stock-history/item/${item.id}\\?size=2&cursor=`));
    const last = await api().get(next).set('Authorization', user.auth).expect(200);
    expect(last.body).to.include({ number: 2, last: true, numberOfElements: 1 });
    expect(last.headers.link).to.equal(undefined);

    const reason = await api()
      .get('/api/stock-history/reason/DAMAGED?size=3')
      .set('Authorization', user.auth)
      .expect(200);
    const [{ n }] = await sql<{ n: string }>(
      "select count(*) as n from stock_history where reason = 'DAMAGED'",
    );
    expect(reason.body.totalElements).to.equal(Number(n));
    expect(reason.body.content.every((e: { reason: string }) => e.reason === 'DAMAGED')).to.equal(true);
    const streamed = await api()
      .get('/api/stock-history/reason/DAMAGED')
      .set('Authorization', user.auth)
      .expect(200);
    expect(streamed.body).to.have.length(Number(n));
    expect(streamed.body.slice(0, 3).map((e: Entry) => e.id)).to.deep.equal(
      (await api().get('/api/stock-history/reason/DAMAGED').set('Authorization', user.auth)).body
        .slice(0, 3)
        .map((e: Entry) => e.id),
    );

    const cursor = new URL(next, 'http://h').searchParams.get('cursor')!;
    for (const bad of [
      `/api/stock-history/item/${item.id}?size=3&cursor=${encodeURIComponent(cursor)}`,
      `/api/stock-history/item/${randomUUID()}?size=2&cursor=${encodeURIComponent(cursor)}`,
      `/api/stock-history/item/${item.id}?size=2&sort=change&cursor=${encodeURIComponent(cursor)}`,
      `/api/stock-history/item/${item.id}?size=2&page=0&cursor=${encodeURIComponent(cursor)}`,
      `/api/stock-history/item/${item.id}?size=2&cursor=garbage`,
      `/api/stock-history/search?size=2&cursor=${encodeURIComponent(cursor)}`,
    ]) {
      const res = await api().get(bad).set('Authorization', user.auth).expect(400);
      expect(res.body.message, bad).to.be.a('string').and.not.equal('');
    }
    const german = await api()
      .get(`/api/stock-history/item/${item.id}?size=2&cursor=garbage`)
      .set('Authorization', user.auth)
      .set('Accept-Language', 'de')
      .expect(400);
    expect(german.body.message).to.match(/Cursor/);
  });

  const CURSOR_MESSAGE = 'the cursor is malformed or belongs to other filters, sort or size';

  it('When a cursor is edited, forged or sent without its size, then 400; the Link of a default-size page names its size', async () => {
    const supplier = await newSupplier(api(), admin.auth);
    const item = await newItem(api(), admin.auth, supplier.id, { quantity: 50 });
    for (let i = 0; i < 3; i++)
      await api()
        .patch(`/api/inventory/${item.id}/quantity?delta=-1&reason=DAMAGED`)
        .set('Authorization', user.auth)
        .expect(200);
    await waitForHistorySettled(testApp().services);
    const path = `/api/stock-history/item/${item.id}`;
    const first = await api().get(`${path}?size=1`).set('Authorization', user.auth).expect(200);
    const cursor = new URL(/^<([^>]+)>/.exec(first.headers.link)![1], 'http://h').searchParams.get('cursor')!;
    await api().get(`${path}?size=1&cursor=${cursor}`).set('Authorization', user.auth).expect(200);
    const [body, signature] = cursor.split('.');
    const fields = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as unknown[];
    const encode = (value: unknown[]) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const edited = (index: number, value: unknown) => encode(fields.map((f, i) => (i === index ? value : f)));
    for (const bad of [
      `${edited(2, 1_000_000)}.${signature}`, // the frozen total
      `${edited(1, 40)}.${signature}`, // the page number
      `${edited(3, '1')}.${signature}`, // the position
      edited(2, 4), // unsigned, as cursors used to be
      `${body}.${Buffer.from('forged').toString('base64url')}`,
      `${body}.${signature}.x`,
    ]) {
      const res = await api()
        .get(`${path}?size=1&cursor=${encodeURIComponent(bad)}`)
        .set('Authorization', user.auth)
        .expect(400);
      expect(res.body.message, bad).to.equal(CURSOR_MESSAGE);
    }
    // Without `size` a cursor is not ignored (which streamed the whole list): 400.
    for (const url of [`${path}?cursor=${cursor}`, `/api/stock-history/search?cursor=${cursor}`]) {
      const res = await api().get(url).set('Authorization', user.auth).expect(400);
      expect(res.body.message, url).to.equal(CURSOR_MESSAGE);
    }
    // The history search without `size` takes its default; the Link names it, so following it works.
    const search = await api()
      .get(`/api/stock-history/search?itemName=${encodeURIComponent(item.name)}`)
      .set('Authorization', user.auth)
      .expect(200);
    expect(search.body.totalElements).to.equal(4);
    expect(search.headers.link).to.equal(undefined);
    const small = await api()
      .get(`/api/stock-history/search?itemName=${encodeURIComponent(item.name)}&size=3`)
      .set('Authorization', user.auth)
      .expect(200);
    const next = /^<([^>]+)>/.exec(small.headers.link)![1];
    expect(next).to.match(/[?&]size=3&cursor=/);
    const rest = await api().get(next).set('Authorization', user.auth).expect(200);
    expect(rest.body.content).to.have.length(1);
  });
});
