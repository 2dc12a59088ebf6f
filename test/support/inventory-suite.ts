import { api, testApp } from '../setup/hooks.js';
import { createUser, type TestUser } from './users.js';
import { newSupplier } from './inventory.js';
import { startWorkers, type RunningWorkers } from '../../workers/main.js';

/** What an inventory suite starts from: an admin, a user, a supplier of theirs and the running workers. */
export interface InventorySuite {
  admin: TestUser;
  user: TestUser;
  supplierId: string;
  workers: RunningWorkers;
}

/**
 * The set-up of a suite over items (call it in the `describe`): its `before` creates the admin, the user and
 * the supplier through the API and starts the workers (no clock); its `after` closes them. The fields are
 * there from the suite's first test on.
 */
export function inventorySuite(): InventorySuite {
  const suite = {} as InventorySuite;
  before(async () => {
    suite.admin = await createUser(testApp().services, 'ROLE_ADMIN', 'admin');
    suite.user = await createUser(testApp().services, 'ROLE_USER');
    suite.supplierId = (await newSupplier(api(), suite.admin.auth)).id;
    suite.workers = startWorkers(testApp().services, { clock: false });
  });
  after(async () => suite.workers?.close());
  return suite;
}
