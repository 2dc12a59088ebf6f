import { randomUUID } from 'node:crypto';
import type { Services } from '../../config/services.js';
import type { ApiClient } from './test-app.js';
import type { TestUser } from './users.js';
import { newItem, newSupplier } from './inventory.js';
import { completeHistory, settleConsumers } from './stock-events.js';
import { createUser } from './users.js';
import { waitFor } from './wait-for.js';
import { startWorkers } from '../../workers/main.js';

/** The sale entries being written, one after the other (see saleEntry). */
let saleEntries: Promise<unknown> = Promise.resolve();

/**
 * Fresh resources for one request, made through the API of the shared app (`client`), each one new so a
 * request may delete or change it. With `stale`, every item and order is changed once after it is made and
 * `staleEtag` holds its ETag from before the change (a request sent with it as If-Match is refused 412).
 */
export class OperationFixtures {
  staleEtag: string | undefined;

  constructor(
    readonly client: ApiClient,
    readonly services: Services,
    readonly admin: TestUser,
    readonly user: TestUser,
    private readonly stale = false,
  ) {}

  /** The same fixtures, with every item and order changed once after it is made (see `staleEtag`). */
  staled(): OperationFixtures {
    return new OperationFixtures(this.client, this.services, this.admin, this.user, true);
  }

  supplier() {
    return newSupplier(this.client, this.admin.auth);
  }

  async item(fields: Record<string, unknown> = {}, supplierId?: string) {
    const item = await newItem(
      this.client,
      this.admin.auth,
      supplierId ?? (await this.supplier()).id,
      fields,
    );
    if (this.stale) {
      this.staleEtag = `"${item.version}"`;
      await this.client
        .patch(`/api/inventory/${item.id}/price?price=3`)
        .set('Authorization', this.admin.auth)
        .expect(200);
    }
    return item;
  }

  async product(fields: Record<string, unknown> = {}): Promise<{ id: number; name: string }> {
    const res = await this.client
      .post('/api/products')
      .set('Authorization', this.admin.auth)
      .send({ name: `Product ${randomUUID().slice(0, 8)}`, quantity: 10, price: 5, ...fields })
      .expect(201);
    return res.body;
  }

  /** A DRAFT order of one line (5 of a new item), or placed (`ORDERED`). */
  async order(placed = false): Promise<{ id: string; itemId: string; supplierId: string }> {
    const supplier = await this.supplier();
    const item = await newItem(this.client, this.admin.auth, supplier.id);
    const body = { supplierId: supplier.id, lines: [{ itemId: item.id, quantity: 5, unitCost: 1 }] };
    const created = await this.client
      .post('/api/purchase-orders')
      .set('Authorization', this.admin.auth)
      .send(body)
      .expect(201);
    const id = created.body.id as string;
    if (placed)
      await this.client
        .post(`/api/purchase-orders/${id}/order`)
        .set('Authorization', this.admin.auth)
        .expect(200);
    if (this.stale) {
      this.staleEtag = created.headers.etag;
      await this.client
        .put(`/api/purchase-orders/${id}`)
        .set('Authorization', this.admin.auth)
        .send(body)
        .expect(200);
    }
    return { id, itemId: item.id, supplierId: supplier.id };
  }

  /** A placed order with one receipt of 2. */
  async receipt(): Promise<{ orderId: string; id: string }> {
    const order = await this.order(true);
    const res = await this.client
      .post(`/api/purchase-orders/${order.id}/receipts`)
      .set('Authorization', this.user.auth)
      .send({ lines: [{ itemId: order.itemId, quantity: 2 }] })
      .expect(201);
    return { orderId: order.id, id: res.body.id };
  }

  /**
   * The history entry of a sale of 2 (written as the history worker would). One at a time: a concurrent
   * completion could mark this sale's event done in a statement whose snapshot had not seen it.
   */
  saleEntry(): Promise<{ id: string; itemId: string }> {
    const entry = saleEntries.then(() => this.writeSaleEntry());
    saleEntries = entry.catch(() => undefined);
    return entry;
  }

  private async writeSaleEntry(): Promise<{ id: string; itemId: string }> {
    const item = await newItem(this.client, this.admin.auth, (await this.supplier()).id);
    await this.client
      .patch(`/api/inventory/${item.id}/quantity?delta=-2&reason=SALE`)
      .set('Authorization', this.admin.auth)
      .expect(200);
    const em = this.services.orm.em.fork();
    await completeHistory(em);
    const [row] = await em.execute<{ id: string }[]>(
      `select id from stock_history where item_id = ? and reason = 'SALE'`,
      [item.id],
    );
    return { id: String(row.id), itemId: item.id };
  }

  /** A queued import (no worker runs it) of one row. */
  async importJob(kind: 'inventory' | 'products'): Promise<string> {
    const csv = 'name,quantity,price\nx,1,1\n';
    const res = await this.client
      .post(`/api/${kind}/import?dryRun=true`)
      .set('Authorization', this.admin.auth)
      .set('Content-Type', 'text/csv')
      .send(csv)
      .expect(202);
    return res.body.jobId;
  }

  /** A user of its own (for a request that ends the caller's sign-in, or a stream, counted per user). */
  freshUser(): Promise<TestUser> {
    return createUser(this.services, 'ROLE_USER', 'fixture');
  }

  /** The id of a job the admin route `path` starts (no worker runs it). */
  async job(path: string): Promise<string> {
    const res = await this.client.post(path).set('Authorization', this.admin.auth).expect(202);
    return res.body.jobId;
  }

  /**
   * A supplier with an item to reorder in the current replenishment suggestions: an item of 30 with a sale
   * of 10, then a replenishment run by workers started for it. Two runs: a run requested earlier (and waiting)
   * starts as soon as the workers do, maybe before the sale reached the analytics, and a request while it
   * runs gets that run back (single-flight); the second one starts after the first has finished.
   */
  async supplierToReorder(): Promise<string> {
    const supplier = await this.supplier();
    const item = await newItem(this.client, this.admin.auth, supplier.id, {
      quantity: 30,
      minimumQuantity: 0,
    });
    await this.client
      .patch(`/api/inventory/${item.id}/quantity?delta=-10&reason=SALE`)
      .set('Authorization', this.admin.auth)
      .expect(200);
    const workers = startWorkers(this.services, { clock: false });
    try {
      await settleConsumers(this.services);
      await this.replenishmentRun();
      await this.replenishmentRun();
    } finally {
      await workers.close();
    }
    return supplier.id;
  }

  /** Requests a replenishment run and waits (on its status route) until it has completed. */
  private async replenishmentRun(): Promise<void> {
    const jobId = await this.job('/api/admin/replenishment/run');
    await waitFor(
      async () => {
        const { body } = await this.client
          .get(`/api/admin/replenishment/run/${jobId}`)
          .set('Authorization', this.admin.auth)
          .expect(200);
        if (body.state === 'failed')
          throw new Error(`replenishment run failed: ${JSON.stringify(body.result)}`);
        return body.state === 'completed' || undefined;
      },
      60000,
      'the replenishment run',
    );
  }
}
