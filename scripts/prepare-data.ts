import type { Services } from '../config/services.js';
import { ensureBootstrapAdmin } from '../domain/users/ensure-bootstrap-admin.js';
import { productTableIsEmpty, seedDemoData } from './seed-demo.js';

/** Start-up data: the bootstrap admin and, on an empty development database, the demo data. */
export async function prepareData(services: Services): Promise<void> {
  const { config, logger, orm } = services;
  if (await ensureBootstrapAdmin(orm.em.fork(), config.bootstrapAdmin))
    logger.info({ username: config.bootstrapAdmin?.username }, 'bootstrap admin created');
  if (config.seedDemoData) {
    if (config.nodeEnv === 'production') logger.warn('SEED_DEMO_DATA is ignored in production');
    else if (await productTableIsEmpty(orm)) {
      const created = await seedDemoData(orm, config);
      logger.info({ created }, 'demo data seeded (empty database)');
    }
  }
}
