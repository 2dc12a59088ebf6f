import pg from 'pg';
import request from 'supertest';
import type { Test } from 'supertest';
import { loadConfig } from '../../config/env.js';
import { closeServices, openServices, type Services } from '../../config/services.js';
import { migrate } from '../../config/database.js';
import { createDatabases } from '../../scripts/create-databases.js';
import { startServer, type RunningServer } from '../../api/server.js';
import { createApp } from '../../api/app.js';
import { OpenApiConformance } from './openapi-conformance.js';
import { TEST_DATABASE_URL, testEnv } from './test-env.js';

export interface TestApp {
  services: Services;
  server: RunningServer;
  openapi: Record<string, any>;
  conformance: OpenApiConformance;
  close(): Promise<void>;
}

/** Creates the database if needed and empties its schema (the app's start applies the migrations). */
export async function resetTestDatabase(databaseUrl: string = TEST_DATABASE_URL): Promise<void> {
  await createDatabases(databaseUrl);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('drop schema if exists public cascade; create schema public;');
  } finally {
    await client.end();
  }
}

/** A real app (real PostgreSQL, real Redis) listening on port 0. */
export async function startTestApp(
  env: Record<string, string> = {},
  options: { migrate?: boolean; port?: number } = {},
): Promise<TestApp> {
  const config = loadConfig(testEnv(env));
  const services = await openServices(config);
  // The request-path Redis client fails fast (no offline queue): let it connect before the first request.
  await waitForRedis(services, 3000);
  if (options.migrate !== false) await migrate(services.orm);
  const { openapi } = createApp(services);
  // A server that cannot listen leaves no pools or clients behind (they kept the test run from ending).
  const server = await startServer(services, options.port ?? 0).catch(async (error: unknown) => {
    await closeServices(services);
    throw error;
  });
  return {
    services,
    server,
    openapi,
    conformance: new OpenApiConformance(openapi),
    close: async () => {
      await server.stop();
      await closeServices(services);
    },
  };
}

async function waitForRedis(services: Services, timeoutMs: number): Promise<void> {
  const { redis } = services;
  if (redis.status === 'ready') return;
  await new Promise<void>(resolve => {
    const timer = setTimeout(done, timeoutMs);
    function done() {
      clearTimeout(timer);
      redis.off('ready', done);
      redis.off('error', done);
      resolve();
    }
    redis.once('ready', done);
    redis.once('error', done);
  });
}

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** supertest against the running app; every response is checked against the OpenAPI document. */
export function apiClient(app: TestApp) {
  const call = (method: Method, url: string): Test =>
    request(app.server.server)
      [method](url)
      .expect(res => app.conformance.check(method, url, res));
  return {
    get: (url: string) => call('get', url),
    post: (url: string) => call('post', url),
    put: (url: string) => call('put', url),
    patch: (url: string) => call('patch', url),
    delete: (url: string) => call('delete', url),
  };
}
export type ApiClient = ReturnType<typeof apiClient>;
