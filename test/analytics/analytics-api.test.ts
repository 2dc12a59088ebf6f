import { expect } from 'chai';
import { api, ownDatabase, testApp, testDatabaseUrl } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { apiClient, startTestApp, type TestApp } from '../support/test-app.js';
import { startWorkers, type RunningWorkers } from '../../workers/main.js';
import { createItem, createSupplier, recordStockChange, settleConsumers } from '../support/stock-events.js';
import { AnalyticsOracle } from '../support/analytics-oracle.js';

const at = (iso: string) => new Date(iso);

describe('Analytics API (N1-N11, X1-X3)', () => {
  // Answers over every supplier compare the whole database with the oracle.
  ownDatabase('analytics_api');
  let workers: RunningWorkers;
  let user: TestUser;
  let admin: TestUser;
  const s: Record<string, string> = {};
  const items: Record<string, string> = {};

  before(async () => {
    const services = testApp().services;
    workers = startWorkers(services, { clock: false });
    user = await createUser(services, 'ROLE_USER');
    admin = await createUser(services, 'ROLE_ADMIN');
    const em = services.orm.em.fork();
    // Worked example 1: +10 @5.00 INITIAL_STOCK on day 1, -4 SALE on day 2.
    s.one = (await createSupplier(em)).id;
    items.a = (await createItem(em, { supplierId: s.one, price: '5.00', minimumQuantity: 8 })).id;
    await recordStockChange(em, {
      itemId: items.a,
      change: 10,
      reason: 'INITIAL_STOCK',
      at: at('2026-01-05T09:00:00Z'),
    });
    await recordStockChange(em, {
      itemId: items.a,
      change: -4,
      reason: 'SALE',
      at: at('2026-01-06T15:00:00Z'),
      createdBy: user.username,
    });
    // Worked example 2: pre-window +5 @4.00, in window +5 @6.00 then -4 SALE.
    s.two = (await createSupplier(em)).id;
    items.b = (await createItem(em, { supplierId: s.two, price: '4.00' })).id;
    await recordStockChange(em, {
      itemId: items.b,
      change: 5,
      reason: 'INITIAL_STOCK',
      at: at('2026-01-01T08:00:00Z'),
    });
    await recordStockChange(em, {
      itemId: items.b,
      change: 5,
      reason: 'RESTOCK',
      price: '6.00',
      at: at('2026-01-10T08:00:00Z'),
    });
    await recordStockChange(em, {
      itemId: items.b,
      change: -4,
      reason: 'SALE',
      at: at('2026-01-11T08:00:00Z'),
    });
    // Worked example 3: February +5 +1 -2.
    s.three = (await createSupplier(em)).id;
    items.c = (await createItem(em, { supplierId: s.three, price: '2.50' })).id;
    await recordStockChange(em, {
      itemId: items.c,
      change: 5,
      reason: 'INITIAL_STOCK',
      at: at('2026-02-02T08:00:00Z'),
    });
    await recordStockChange(em, {
      itemId: items.c,
      change: 1,
      reason: 'RETURN',
      at: at('2026-02-10T08:00:00Z'),
    });
    await recordStockChange(em, {
      itemId: items.c,
      change: -2,
      reason: 'DAMAGED',
      at: at('2026-02-20T08:00:00Z'),
    });
    await settleConsumers(services);
  });

  after(async () => {
    await workers.close();
  });

  const get = (url: string, who: TestUser | null = user) => {
    const req = api().get(url);
    return who ? req.set('Authorization', who.auth) : req;
  };

  describe('worked examples', () => {
    it('When +10 @5.00 on day 1 and -4 SALE on day 2, then cogs 4 / 20.00 and ending 6 / 30.00', async () => {
      const res = await get(
        `/api/analytics/financial/summary?from=2026-01-05&to=2026-01-06&supplierId=${s.one}`,
      ).expect(200);
      expect(res.body).to.include({ cogsQty: 4, cogsCost: 20, endingQty: 6, endingValue: 30, openingQty: 0 });
      expect(res.body).to.include({
        purchasesQty: 10,
        purchasesCost: 50,
        weightedAverageCost: 5,
        method: 'WAC',
      });
      expect(res.body.period).to.deep.equal({ from: '2026-01-05', to: '2026-01-06' });
    });

    it('When +5 @4.00 before the window, +5 @6.00 and -4 SALE in it, then opening 5 / 20.00, cogs 4 / 20.00, ending 6 / 30.00', async () => {
      const res = await get(
        `/api/analytics/financial/summary?from=2026-01-10&to=2026-01-11&supplierId=${s.two}`,
      ).expect(200);
      expect(res.body).to.include({
        openingQty: 5,
        openingValue: 20,
        purchasesQty: 5,
        purchasesCost: 30,
        cogsQty: 4,
        cogsCost: 20,
        endingQty: 6,
        endingValue: 30,
        totalInventoryValue: 30,
        totalQuantity: 6,
        totalCost: 30,
      });
    });

    it('When February has +5 +1 -2, then monthly movement is stockIn 6, stockOut 2', async () => {
      const res = await get(
        `/api/analytics/monthly-stock-movement?start=2026-02-01&end=2026-02-28&supplierId=${s.three}`,
      ).expect(200);
      expect(res.body).to.deep.equal([{ month: '2026-02', stockIn: 6, stockOut: 2 }]);
    });
  });

  describe('windows cut at month boundaries (month buckets for whole months, day buckets for the ends)', () => {
    let supplier: string;
    let oracle: AnalyticsOracle;
    before(async () => {
      const services = testApp().services;
      const em = services.orm.em.fork();
      supplier = (await createSupplier(em)).id;
      const item = (await createItem(em, { supplierId: supplier, price: '3.00' })).id;
      const days = ['2025-12-31', '2026-01-01', '2026-01-31', '2026-02-01', '2026-02-28', '2026-03-01'];
      for (const [i, day] of days.entries()) {
        await recordStockChange(em, {
          itemId: item,
          change: 20 + i,
          reason: 'RESTOCK',
          at: at(`${day}T00:00:00Z`),
        });
        await recordStockChange(em, {
          itemId: item,
          change: -(3 + i),
          reason: 'SALE',
          at: at(`${day}T23:59:59Z`),
        });
      }
      await settleConsumers(services);
      oracle = await AnalyticsOracle.load(services.orm.em.fork());
    });

    const windows = [
      ['2026-01-01', '2026-01-31'],
      ['2025-12-31', '2026-02-01'],
      ['2026-01-02', '2026-02-28'],
      ['2026-02-01', '2026-03-01'],
      ['2026-01-31', '2026-01-31'],
      ['2026-01-01', '2026-02-27'],
      ['2026-02-01', '2026-02-01'],
      ['2025-12-01', '2026-03-31'],
    ];
    for (const [start, end] of windows)
      it(`When the window is ${start}..${end}, then N6, N9 and N11 equal the oracle`, async () => {
        const movement = await get(
          `/api/analytics/monthly-stock-movement?start=${start}&end=${end}&supplierId=${supplier}`,
        ).expect(200);
        expect(movement.body).to.deep.equal(oracle.monthlyMovement(start, end, supplier));
        expect(movement.body).to.not.deep.equal([]);
        const summary = await get(
          `/api/analytics/summary?startDate=${start}&endDate=${end}&supplierId=${supplier}`,
        ).expect(200);
        expect(summary.body).to.deep.equal(oracle.summary(start, end, supplier));
        const financial = await get(
          `/api/analytics/financial/summary?from=${start}&to=${end}&supplierId=${supplier}`,
        ).expect(200);
        expect(financial.body).to.deep.equal(oracle.financial(start, end, supplier));
      });
  });

  describe('every endpoint answers like the raw-history oracle', () => {
    let oracle: AnalyticsOracle;
    before(async () => {
      oracle = await AnalyticsOracle.load(testApp().services.orm.em.fork());
    });

    it('N1 stock value per day', async () => {
      const res = await get(
        `/api/analytics/stock-value?start=2026-01-04&end=2026-01-12&supplierId=${s.two}`,
      ).expect(200);
      expect(res.body).to.deep.equal(oracle.stockValue('2026-01-04', '2026-01-12', s.two));
      expect(res.body[0]).to.deep.equal({ date: '2026-01-04', totalValue: 20 });
      expect(res.body.at(-1)).to.deep.equal({ date: '2026-01-12', totalValue: 36 });
      const all = await get('/api/analytics/stock-value?start=2025-12-30&end=2026-03-01').expect(200);
      expect(all.body).to.deep.equal(oracle.stockValue('2025-12-30', '2026-03-01'));
    });

    it('N2 stock per supplier, N3 low-stock count, N5 low-stock items', async () => {
      expect((await get('/api/analytics/stock-per-supplier').expect(200)).body).to.deep.equal(
        oracle.stockPerSupplier(),
      );
      expect((await get('/api/analytics/low-stock/count').expect(200)).body).to.equal(oracle.lowStockCount());
      const low = await get(`/api/analytics/low-stock-items?supplierId=${s.one}`).expect(200);
      expect(low.body).to.deep.equal([
        {
          itemId: items.a,
          itemName: low.body[0].itemName,
          quantity: 6,
          minimumQuantity: 8,
          recommendedQuantity: 10,
        },
      ]);
    });

    it('N4 item update frequency', async () => {
      const res = await get(`/api/analytics/item-update-frequency?supplierId=${s.two}`).expect(200);
      expect(res.body).to.deep.equal(oracle.updateFrequency(s.two));
      expect(res.body[0].updateCount).to.equal(3);
    });

    it('N7 and N8 stock updates, newest first', async () => {
      const q = 'startDate=2026-01-01&endDate=2026-02-28';
      const res = await get(`/api/analytics/stock-updates?${q}&supplierId=${s.one}`).expect(200);
      expect(res.body).to.deep.equal(
        oracle.stockUpdates({
          from: at('2026-01-01T00:00:00Z'),
          to: at('2026-03-01T00:00:00Z'),
          toInclusive: false,
          supplierId: s.one,
        }),
      );
      expect(res.body.map((r: any) => r.change)).to.deep.equal([-4, 10]);
      const posted = await api()
        .post('/api/analytics/stock-updates/query')
        .set('Authorization', user.auth)
        .send({
          startDate: '2026-01-01',
          endDate: '2026-02-28',
          supplierId: s.one,
          maxChange: -1,
          itemName: null,
        })
        .expect(200);
      expect(posted.body.map((r: any) => r.change)).to.deep.equal([-4]);
      expect(posted.body[0].createdBy).to.equal(user.username);
    });

    it('N9 summary', async () => {
      const res = await get(
        `/api/analytics/summary?startDate=2026-01-01&endDate=2026-02-28T23:59:59Z&supplierId=${s.three}`,
      ).expect(200);
      expect(res.body).to.deep.equal(oracle.summary('2026-01-01', '2026-02-28', s.three));
      await get('/api/analytics/summary').expect(200);
    });

    it('N10 price trend', async () => {
      const res = await get(
        `/api/analytics/price-trend?itemId=${items.b}&start=2026-01-01&end=2026-01-31`,
      ).expect(200);
      expect(res.body).to.deep.equal(oracle.priceTrend(items.b, '2026-01-01', '2026-01-31'));
      expect(res.body).to.deep.equal([
        { timestamp: '2026-01-01', price: 4 },
        { timestamp: '2026-01-10', price: 6 },
        { timestamp: '2026-01-11', price: 6 },
      ]);
    });

    it('X1 reason breakdown', async () => {
      const res = await get(
        `/api/analytics/reason-breakdown?startDate=2026-02-01&endDate=2026-02-28&supplierId=${s.three}`,
      ).expect(200);
      expect(res.body).to.deep.equal([
        { reason: 'DAMAGED', increase: 0, decrease: 2 },
        { reason: 'INITIAL_STOCK', increase: 5, decrease: 0 },
        { reason: 'RETURN', increase: 1, decrease: 0 },
      ]);
    });

    it('X2 by employee and X3 employee changes (ADMIN)', async () => {
      for (const g of ['daily', 'weekly', 'monthly'] as const) {
        const res = await get(
          `/api/analytics/by-employee?granularity=${g}&startDate=2026-01-01&endDate=2026-02-28`,
          admin,
        ).expect(200);
        expect(res.body).to.deep.equal(oracle.byEmployee(g, '2026-01-01', '2026-02-28'));
      }
      const page = await get(
        `/api/analytics/employee-changes?createdBy=${user.username}&startDate=2026-01-01&endDate=2026-12-31&size=1`,
        admin,
      ).expect(200);
      expect(page.body).to.include({ totalElements: 1, size: 1, number: 0, first: true, last: true });
      expect(page.body.content[0]).to.include({ change: -4, reason: 'SALE', itemId: items.a });
      await get('/api/analytics/employee-changes?size=101', admin).expect(400);
    });
  });

  describe('validation (400)', () => {
    const missing = [
      ['/api/analytics/stock-value?end=2026-01-02', 'start'],
      ['/api/analytics/stock-value?start=2026-01-02', 'end'],
      ['/api/analytics/item-update-frequency', 'supplierId'],
      ['/api/analytics/low-stock-items?supplierId=', 'supplierId'],
      ['/api/analytics/monthly-stock-movement?start=2026-01-01', 'end'],
      ['/api/analytics/price-trend?start=2026-01-01&end=2026-01-02', 'itemId'],
      ['/api/analytics/financial/summary?to=2026-01-02', 'from'],
      ['/api/analytics/financial/summary?from=2026-01-02', 'to'],
    ];
    for (const [url, name] of missing)
      it(`When ${name} is missing from ${url.split('?')[0]}, then 400 "Missing required parameter: ${name}"`, async () => {
        const res = await get(url).expect(400);
        expect(res.body.message).to.equal(`Missing required parameter: ${name}`);
        expect(res.body.error).to.equal('bad_request');
      });

    const inverted = [
      ['/api/analytics/stock-value?start=2026-01-03&end=2026-01-02', 'start must be on or before end'],
      [
        '/api/analytics/monthly-stock-movement?start=2026-03-01&end=2026-01-02',
        'start must be on or before end',
      ],
      [
        `/api/analytics/price-trend?itemId=${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}&start=2026-01-03&end=2026-01-02`,
        'start must be on or before end',
      ],
      ['/api/analytics/financial/summary?from=2026-01-03&to=2026-01-02', 'from must be on or before to'],
      [
        '/api/analytics/summary?startDate=2026-01-03&endDate=2026-01-02',
        'startDate must be on or before endDate',
      ],
      [
        '/api/analytics/stock-updates?startDate=2026-01-03T00:00:00Z&endDate=2026-01-02T00:00:00Z',
        'startDate must be on or before endDate',
      ],
      [
        '/api/analytics/reason-breakdown?startDate=2026-01-03&endDate=2026-01-02',
        'startDate must be on or before endDate',
      ],
    ];
    for (const [url, message] of inverted)
      it(`When the range is inverted on ${url.split('?')[0]}, then 400 "${message}"`, async () => {
        const res = await get(url).expect(400);
        expect(res.body.message).to.equal(message);
      });

    it('When the range is inverted on X2/X3, then 400', async () => {
      await get('/api/analytics/by-employee?startDate=2026-01-03&endDate=2026-01-02', admin).expect(400);
      await get('/api/analytics/employee-changes?startDate=2026-01-03&endDate=2026-01-02', admin).expect(400);
      await get('/api/analytics/by-employee?granularity=hourly', admin).expect(400);
    });

    it('When a date, a uuid or a number is malformed, then 400 (and German on request)', async () => {
      await get('/api/analytics/stock-value?start=2026-13-01&end=2026-01-02').expect(400);
      await get('/api/analytics/stock-value?start=yesterday&end=2026-01-02').expect(400);
      await get('/api/analytics/item-update-frequency?supplierId=nope').expect(400);
      await get('/api/analytics/stock-updates?minChange=abc').expect(400);
      await api()
        .post('/api/analytics/stock-updates/query')
        .set('Authorization', user.auth)
        .send({ minChange: 'x' })
        .expect(400);
      const de = await get('/api/analytics/financial/summary?to=2026-01-02&lang=de').expect(400);
      expect(de.body.message).to.equal('Erforderlicher Parameter fehlt: from');
    });

    it('When dates lie in the future, then they are valid', async () => {
      const res = await get('/api/analytics/financial/summary?from=2099-01-01&to=2099-01-02').expect(200);
      expect(res.body.openingQty).to.equal(res.body.endingQty);
    });

    it('When a range lies in the last supported month, then the summary of its months answers 200, not 500', async () => {
      for (const range of [
        'startDate=9999-12-30&endDate=9999-12-30',
        'startDate=9999-12-02&endDate=9999-12-30',
      ]) {
        const summary = await get(`/api/analytics/summary?${range}`).expect(200);
        expect(summary.body.monthlyStockMovement).to.deep.equal([]);
      }
    });

    it('When unknown query parameters come along, then they are ignored', async () => {
      await get('/api/analytics/stock-per-supplier?limit=5&foo=bar').expect(200);
    });
  });

  describe('roles and demo mode', () => {
    const reads = [
      '/api/analytics/stock-value?start=2026-01-01&end=2026-01-02',
      '/api/analytics/stock-per-supplier',
      '/api/analytics/low-stock/count',
      '/api/analytics/summary',
      '/api/analytics/financial/summary?from=2026-01-01&to=2026-01-02',
      '/api/analytics/reason-breakdown',
      '/api/analytics/stock-updates',
    ];

    it('When nobody is signed in, then every analytics read is 401', async () => {
      for (const url of [
        ...reads,
        '/api/analytics/by-employee',
        '/api/analytics/employee-changes',
        '/api/alerts/low-stock',
      ])
        await get(url, null).expect(401);
      await api().post('/api/analytics/stock-updates/query').send({}).expect(401);
    });

    it('When a USER asks for X2/X3, then 403; an ADMIN gets 200', async () => {
      await get('/api/analytics/by-employee', user).expect(403);
      await get('/api/analytics/employee-changes', user).expect(403);
      await get('/api/analytics/by-employee', admin).expect(200);
      await get('/api/analytics/employee-changes', admin).expect(200);
    });

    describe('in demo mode', () => {
      let demo: TestApp;
      before(async () => {
        demo = await startTestApp(
          { APP_DEMO_READONLY: 'true', DATABASE_URL: testDatabaseUrl() },
          { migrate: false },
        );
      });
      after(async () => {
        await demo.close();
      });

      it('When anonymous, then the demo reads (X2/X3 included since issue 13) answer 200, N8 still needs a user', async () => {
        const client = apiClient(demo);
        for (const url of reads) await client.get(url).expect(200);
        await client.post('/api/analytics/stock-updates/query').send({}).expect(401);
        await client.get('/api/analytics/by-employee').expect(200);
        await client
          .post('/api/analytics/stock-updates/query')
          .set('Authorization', user.auth)
          .send({})
          .expect(200);
        await client.post('/api/admin/reports/rebuild').set('Authorization', admin.auth).expect(403);
      });
    });
  });
});
