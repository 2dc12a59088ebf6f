import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { apiClient, resetTestDatabase, startTestApp, type TestApp } from '../support/test-app.js';
import { TEST_DATABASE_URL } from '../support/test-env.js';
import { createUser, type TestUser } from '../support/users.js';
import { newItem, newSupplier } from '../support/inventory.js';
import { startWorkers, type RunningWorkers } from '../../workers/main.js';
import { waitFor } from '../support/wait-for.js';
import { startReceiver } from '../support/webhook-receiver.js';

const SECRET = 'webhook-secret-for-tests-0123456789';
/**
 * A database of its own: any worker on a database without a webhook URL (another suite's, or a process a test
 * spawned and is still stopping) would mark the order events handled without a delivery.
 */
const DATABASE_URL = `${TEST_DATABASE_URL}_order_webhooks`;

describe('Purchasing: order webhooks through the outbox (purchase_order.ordered, .received, .cancelled)', function () {
  this.timeout(60000);
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let app: TestApp;
  let workers: RunningWorkers;
  let admin: TestUser;

  before(async () => {
    // The first delivery attempt fails: the retry delivers it, still once per event.
    receiver = await startReceiver(1);
    await resetTestDatabase(DATABASE_URL);
    app = await startTestApp({ DATABASE_URL, LOW_STOCK_WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: SECRET });
    workers = startWorkers(app.services, { clock: false });
    admin = await createUser(app.services, 'ROLE_ADMIN', 'admin');
  });

  after(async () => {
    await workers?.close();
    await app?.close();
    await receiver?.close();
  });

  /** The delivered bodies of an order's events (the 2xx answers), each with its signature checked. */
  const deliveredFor = (orderId: string) => {
    const calls = receiver.received.filter(r => JSON.parse(r.body).order?.id === orderId);
    return calls.map(call => {
      const timestamp = String(call.headers['x-stockroom-timestamp']);
      const signature = createHmac('sha256', SECRET).update(`${timestamp}.${call.body}`).digest('hex');
      expect(call.headers['x-stockroom-signature']).to.equal(`sha256=${signature}`);
      return { delivery: String(call.headers['x-stockroom-delivery']), body: JSON.parse(call.body) };
    });
  };
  const rowsFor = (orderId: string) =>
    app.services.orm.em
      .fork()
      .execute<{ event_type: string; status: string }[]>(
        "select event_type, status from webhook_delivery where payload->'order'->>'id' = ? order by id",
        [orderId],
      );

  it('When an order is placed, received in two receipts and another cancelled, then each event gives one signed delivery with the order as P3 answers it', async () => {
    const client = apiClient(app);
    const supplier = await newSupplier(client, admin.auth);
    const item = await newItem(client, admin.auth, supplier.id, { quantity: 0, price: 3 });
    const draft = async () =>
      (
        await client
          .post('/api/purchase-orders')
          .set('Authorization', admin.auth)
          .send({ supplierId: supplier.id, lines: [{ itemId: item.id, quantity: 6, unitCost: 2.2 }] })
          .expect(201)
      ).body as { id: string };
    const received = await draft();
    const placed = await client
      .post(`/api/purchase-orders/${received.id}/order`)
      .set('Authorization', admin.auth)
      .expect(200);
    for (const quantity of [2, 4])
      await client
        .post(`/api/purchase-orders/${received.id}/receipts`)
        .set('Authorization', admin.auth)
        .send({ lines: [{ itemId: item.id, quantity }] })
        .expect(201);
    const fullyReceived = (
      await client.get(`/api/purchase-orders/${received.id}`).set('Authorization', admin.auth).expect(200)
    ).body;
    expect(fullyReceived.status).to.equal('RECEIVED');

    const cancelledOrder = await draft();
    await client
      .post(`/api/purchase-orders/${cancelledOrder.id}/order`)
      .set('Authorization', admin.auth)
      .expect(200);
    const cancelled = await client
      .post(`/api/purchase-orders/${cancelledOrder.id}/cancel`)
      .set('Authorization', admin.auth)
      .expect(200);

    // The write answers no delivery of its own: the outbox event is its only trace.
    for (const body of [placed.body, cancelled.body]) expect(body).to.not.have.property('deliveries');
    await waitFor(
      async () =>
        [...(await rowsFor(received.id)), ...(await rowsFor(cancelledOrder.id))].filter(
          r => r.status === 'delivered',
        ).length === 4,
      30000,
      'the order webhooks',
    );
    expect((await rowsFor(received.id)).map(r => r.event_type)).to.deep.equal([
      'purchase_order.ordered',
      'purchase_order.received',
    ]);
    expect((await rowsFor(cancelledOrder.id)).map(r => r.event_type)).to.deep.equal([
      'purchase_order.ordered',
      'purchase_order.cancelled',
    ]);

    const first = deliveredFor(received.id);
    // One delivery per event (a retried delivery keeps its id); the failed first attempt is among them.
    const byDelivery = new Map(first.map(c => [c.delivery, c.body]));
    expect(byDelivery.size).to.equal(2);
    // The failed first attempt is retried after a backoff, so deliveries may arrive out of order: by type.
    const ofType = (bodies: Map<string, any>, type: string) =>
      [...bodies.values()].find(b => b.type === type);
    const ordered = ofType(byDelivery, 'purchase_order.ordered');
    const receivedEvent = ofType(byDelivery, 'purchase_order.received');
    expect(Object.keys(ordered).sort()).to.deep.equal(['eventId', 'occurredAt', 'order', 'type']);
    expect(ordered).to.deep.include({ type: 'purchase_order.ordered', order: placed.body });
    expect(receivedEvent).to.deep.include({ type: 'purchase_order.received', order: fullyReceived });
    expect(ordered.eventId).to.be.a('string').and.not.equal(receivedEvent.eventId);
    expect(Number.isNaN(Date.parse(ordered.occurredAt))).to.equal(false);

    const second = new Map(deliveredFor(cancelledOrder.id).map(c => [c.delivery, c.body]));
    expect(second.size).to.equal(2);
    expect(ofType(second, 'purchase_order.cancelled')).to.deep.include({
      type: 'purchase_order.cancelled',
      order: cancelled.body,
    });
    // Once each: the consumer marked every event with its delivery, nothing more is delivered later.
    expect(receiver.received.filter(r => JSON.parse(r.body).order?.id === received.id)).to.have.length(
      first.length,
    );
  });
});
