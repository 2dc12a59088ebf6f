import {
  apiClient,
  resetTestDatabase,
  startTestApp,
  type ApiClient,
  type TestApp,
} from '../support/test-app.js';
import { TEST_DATABASE_URL } from '../support/test-env.js';

let shared: TestApp | undefined;
let sharedApi: ApiClient | undefined;

/** The app shared by the API suites (started once per mocha run, closed at the end so mocha exits by itself). */
export function testApp(): TestApp {
  if (!shared) throw new Error('test app not started');
  return shared;
}

export function api(): ApiClient {
  sharedApi ??= apiClient(testApp());
  return sharedApi;
}

/** The database of the app that testApp() answers with (a suite's own, see ownDatabase). */
export const testDatabaseUrl = (): string => testApp().services.config.databaseUrl;

/**
 * Gives the calling suite a database and an app of its own for its duration (call it first in its `describe`,
 * before any set-up that uses testApp()): testApp() and api() answer with them. For suites whose answers span
 * the whole database (every supplier, every item, the whole export): rows that other suites leave, in
 * whatever order the suites run, never reach them. The app closes after the suite's own `after` hooks (which
 * may still use it): its closing hook is appended to the suite when the suite starts.
 */
export function ownDatabase(name: string): void {
  before(async function () {
    this.timeout(60000);
    const databaseUrl = `${TEST_DATABASE_URL}_${name}`;
    await resetTestDatabase(databaseUrl);
    const own = await startTestApp({ DATABASE_URL: databaseUrl });
    const saved = { app: shared, api: sharedApi };
    shared = own;
    sharedApi = undefined;
    this.test!.parent!.afterAll(async function () {
      this.timeout(30000);
      shared = saved.app;
      sharedApi = saved.api;
      await own.close();
    });
  });
}

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60000);
    if (shared) return;
    await resetTestDatabase();
    shared = await startTestApp();
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(30000);
    await shared?.close();
    shared = undefined;
    sharedApi = undefined;
  },
};
