import { randomUUID } from 'node:crypto';
import type { ApiClient } from './test-app.js';

/** Creates a supplier through the API (ADMIN bearer header). */
export async function newSupplier(client: ApiClient, auth: string, fields: Record<string, unknown> = {}) {
  const res = await client
    .post('/api/suppliers')
    .set('Authorization', auth)
    .send({ name: `Supplier ${randomUUID().slice(0, 8)}`, email: 'sales@example.test', ...fields })
    .expect(201);
  return res.body as { id: string; name: string; createdAt: string };
}

/** Creates an item through the API. */
export async function newItem(
  client: ApiClient,
  auth: string,
  supplierId: string,
  fields: Record<string, unknown> = {},
) {
  const res = await client
    .post('/api/inventory')
    .set('Authorization', auth)
    .send({ name: `Item ${randomUUID().slice(0, 8)}`, quantity: 10, price: 2.5, supplierId, ...fields })
    .expect(201);
  return res.body as {
    id: string;
    name: string;
    quantity: number;
    version: number;
    price: number;
    createdAt: string;
    updatedAt: string;
  };
}

/** Runs `tasks` with at most `lanes` in flight. */
export async function inLanes<T>(
  count: number,
  lanes: number,
  task: (i: number) => Promise<T>,
): Promise<T[]> {
  const results: T[] = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(lanes, count) }, async () => {
      for (let i = next++; i < count; i = next++) results[i] = await task(i);
    }),
  );
  return results;
}
