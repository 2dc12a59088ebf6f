import type { Services } from '../config/services.js';
import { ensureBootstrapAdmin } from '../domain/users/ensure-bootstrap-admin.js';

/** Start-up data: the bootstrap admin and, on an empty development database, the demo data. */
export async function prepareData(services: Services): Promise<void> {
  const { config, logger, orm } = services;
  if (await ensureBootstrapAdmin(orm.em.fork(), config.bootstrapAdmin))
    logger.info({ username: config.bootstrapAdmin?.username }, 'bootstrap admin created');
  // The demo-data module adds the demo seed here.
}
