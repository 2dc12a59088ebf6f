import {
  apiClient,
  resetTestDatabase,
  startTestApp,
  type ApiClient,
  type TestApp,
} from '../support/test-app.js';

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
