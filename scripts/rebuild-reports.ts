import { loadConfig } from '../config/env.js';
import { openOrm } from '../config/database.js';
import { rebuildRollups } from '../domain/analytics/rebuild/rebuild-rollups.js';
import { runScript } from './run-script.js';

/**
 * `npm run reports:rebuild`: rebuilds every analytics rollup from the stock history in this process, with the
 * same exclusive lock as the BullMQ job (so it never runs alongside another rebuild; the analytics consumer
 * waits meanwhile and writes go on).
 */
await runScript(async () => {
  const config = loadConfig();
  const orm = await openOrm(config.databaseUrl, 2, { caPem: config.databaseCa });
  try {
    let last = -1;
    const result = await rebuildRollups(orm.em.fork(), async percent => {
      if (percent !== last) console.log(`rebuild: ${percent}%`);
      last = percent;
    });
    console.log(
      `rebuild done: ${result.events} events of ${result.items} items folded in ${result.durationMs} ms`,
    );
  } finally {
    await orm.close(true);
  }
});
