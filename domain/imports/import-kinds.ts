import { ITEM_IMPORT } from '../inventory/import-item-row.js';
import { PRODUCT_IMPORT } from '../catalog/import-product-row.js';
import type { ImportKind } from './import-kind.js';

/** What can be imported: inventory items (with suppliers) and products of the product API. */
export const IMPORT_KINDS = { items: ITEM_IMPORT, products: PRODUCT_IMPORT } satisfies Record<
  string,
  ImportKind
>;
export type ImportKindName = keyof typeof IMPORT_KINDS;

/** BullMQ job id of an import (custom ids must not be bare numbers). */
export const importJobId = (id: string | number): string => `import-${id}`;

/** The row id of an import job id, or undefined for anything else. */
export const importIdOf = (jobId: string): string | undefined => /^import-(\d{1,18})$/.exec(jobId)?.[1];

/** Files larger than this are refused (413) before anything is stored. */
export const MAX_IMPORT_BYTES = 20 * 1024 * 1024;
