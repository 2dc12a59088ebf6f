import { randomBytes } from 'node:crypto';
import { ITEM_IMPORT } from './item-import.js';
import { PRODUCT_IMPORT } from './product-import.js';
import type { ImportKind } from './import-kind.js';

/** What can be imported: inventory items (with suppliers) and products of the product API. */
export const IMPORT_KINDS = { items: ITEM_IMPORT, products: PRODUCT_IMPORT } satisfies Record<
  string,
  ImportKind
>;
export type ImportKindName = keyof typeof IMPORT_KINDS;

/**
 * A new import's public job id (also its BullMQ job id): 144 random bits, so job ids cannot be guessed or
 * enumerated; the sequential row id stays internal.
 */
export const newImportJobId = (): string => `import-${randomBytes(18).toString('base64url')}`;

/** Whether `jobId` can be a job id at all (anything else is unknown without asking the database). */
export const isImportJobId = (jobId: string): boolean => /^import-[A-Za-z0-9_-]{1,64}$/.test(jobId);
