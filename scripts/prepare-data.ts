import type { Services } from '../config/services.js';

/** Start-up data: the bootstrap admin and, on an empty development database, the demo data. */
export async function prepareData(_services: Services): Promise<void> {
  // Filled in by the identity (bootstrap admin) and demo-data modules.
}
