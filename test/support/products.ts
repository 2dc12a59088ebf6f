import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { createUser, type TestUser } from './users.js';

export const unique = (prefix = 'Product') => `${prefix} ${randomUUID().slice(0, 8)}`;

export interface ProductActors {
  admin: TestUser;
  user: TestUser;
}

export async function productActors(): Promise<ProductActors> {
  const services = testApp().services;
  return {
    admin: await createUser(services, 'ROLE_ADMIN', 'padmin'),
    user: await createUser(services, 'ROLE_USER', 'puser'),
  };
}

/** Creates a product through the API (as ADMIN) and returns the response body. */
export async function createProduct(
  admin: TestUser,
  fields: Record<string, unknown> = {},
): Promise<Record<string, any>> {
  const res = await api()
    .post('/api/products')
    .set('Authorization', admin.auth)
    .send({ name: unique(), quantity: 10, price: 5, ...fields })
    .expect(201);
  return res.body;
}

/** Runs SQL against the test database (outside any request). */
export async function sql<T = Record<string, any>>(query: string, params: unknown[] = []): Promise<T[]> {
  return testApp().services.orm.em.fork().execute<T[]>(query, params);
}

export async function truncateProducts(): Promise<void> {
  await sql('truncate product');
}

export const messageOf = (body: { message: string }) => body.message;

export function expectProductError(body: Record<string, any>, status: number, message: string): void {
  expect(body).to.include({ success: false, status, message });
  expect(body.correlationId).to.be.a('string');
}
