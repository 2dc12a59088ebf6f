import type { EntityManager } from '@mikro-orm/postgresql';

/** Finished imports (their files and reports) are kept this long, then removed by the daily cleanup. */
export const IMPORT_RETENTION_DAYS = 7;

/** Deletes imports that finished more than IMPORT_RETENTION_DAYS ago; answers how many. */
export async function purgeImports(em: EntityManager): Promise<number> {
  const rows = await em.execute<{ id: string }[]>(
    `delete from csv_import where state in ('completed', 'failed', 'cancelled')
        and finished_at < now() - make_interval(days => ?) returning id`,
    [IMPORT_RETENTION_DAYS],
  );
  return rows.length;
}
