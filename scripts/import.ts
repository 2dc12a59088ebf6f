import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { SingleBar, Presets } from 'cli-progress';
import { loadConfig } from '../config/env.js';
import { closeServices, openServices } from '../config/services.js';
import { requestImport } from '../domain/imports/request-import.js';
import { runImport } from '../domain/imports/run-import.js';
import { AppError } from '../domain/shared/errors.js';
import { runScript } from './run-script.js';

const USAGE = `usage: npm run import -- --file items.csv [--dry-run] [--create-suppliers] [--products] [--user <admin>] [--lang en|de]
Imports inventory items (or, with --products, products) from a CSV file, all or nothing, with the same rules
as the API. --user names the ADMIN account the changes are booked under (default: admin).`;

/**
 * `npm run import`: registers the file as an import (as POST /api/inventory/import does) and runs it in this
 * process with a progress bar, so no worker is needed; a worker that picks up the same job waits for this
 * run and finds it done.
 */
await runScript(async () => {
  const { values } = parseArgs({
    options: {
      file: { type: 'string' },
      'dry-run': { type: 'boolean', default: false },
      'create-suppliers': { type: 'boolean', default: false },
      products: { type: 'boolean', default: false },
      user: { type: 'string', default: 'admin' },
      lang: { type: 'string', default: 'en' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help || !values.file) {
    console.error(USAGE);
    process.exit(values.help ? 0 : 2);
  }
  const config = loadConfig();
  const { size } = await stat(values.file);
  if (size > config.importMaxBytes)
    throw new Error(`${values.file} is larger than IMPORT_MAX_BYTES (${config.importMaxBytes} bytes)`);
  const services = await openServices(config);
  const em = services.orm.em.fork();
  const t = services.i18n.getFixedT(values.lang);
  try {
    const [account] = await em.execute<
      { id: number; username: string; email: string | null; role: string }[]
    >('select id, username, email, role from app_user where username = ? or email = ?', [
      values.user,
      values.user,
    ]);
    if (account?.role !== 'ROLE_ADMIN') throw new Error(`${values.user} is not an ADMIN account`);
    const jobId = await requestImport(em, services.queues, {
      kind: values.products ? 'products' : 'items',
      content: createReadStream(values.file),
      dryRun: values['dry-run'],
      createSuppliers: values['create-suppliers'],
      language: values.lang,
      userId: account.id,
      write: { user: account.email ?? account.username, correlationId: null },
    });
    const bar = new SingleBar(
      { format: 'import [{bar}] {percentage}% | {value}/{total} rows' },
      Presets.shades_classic,
    );
    let started = false;
    const [{ id }] = await em.execute<{ id: string }[]>(
      'select id::text as id from csv_import where public_id = ?',
      [jobId],
    );
    const report = await runImport(em, services.queues, id, {
      isKey: key => services.i18n.exists(key),
      onProgress: async (read, total) => {
        if (!started) bar.start(total, 0);
        started = true;
        bar.update(read);
      },
    });
    if (started) bar.stop();
    if (!report) {
      console.log(`${jobId}: already run (see GET /api/inventory/import/${jobId})`);
      return;
    }
    const mode = values['dry-run'] ? 'dry run' : report.applied ? 'applied' : 'NOT applied';
    console.log(
      `${jobId} (${mode}): ${report.created} created, ${report.updated} updated, ${report.unchanged} unchanged, ${report.rejectedCount} rejected`,
    );
    for (const r of report.rejected)
      console.log(`  line ${r.line}${r.column ? `, ${r.column}` : ''}: ${t(r.messageKey, { ...r.params })}`);
    if (report.rejectedCount > 0) process.exitCode = 1;
  } catch (error) {
    if (error instanceof AppError) {
      console.error(t(error.messageKey, error.params));
      process.exitCode = 2;
    } else throw error;
  } finally {
    await closeServices(services);
  }
});
