import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppError } from '../shared/errors.js';
import { numericToCents, toCents } from '../shared/money.js';
import { cellValues, claimRowKeys, refusedAs, validateRow, type ImportKind } from '../imports/import-kind.js';
import { createProductBody } from './catalog.schemas.js';
import { createProduct } from './create-product.js';
import { updateProductFields, type UpdateProductFieldsInput } from './update-product-fields.js';

const COLUMNS = ['name', 'sku', 'quantity', 'price', 'purchasePrice', 'category', 'description'] as const;

interface ProductImportRow {
  name: string;
  sku?: string;
  quantity: number;
  price?: number;
  purchasePrice?: number;
  category?: string | null;
  description?: string | null;
}

interface StoredProduct {
  id: string;
  name: string;
  sku: string;
  quantity: number;
  price: string;
  category: string | null;
  description: string | null;
}

const columnOf = (error: AppError): string | null =>
  error.fieldErrors[0]?.field ?? (error.messageKey.includes('sku') ? 'sku' : 'name');

async function findProduct(tx: EntityManager, row: ProductImportRow): Promise<StoredProduct | undefined> {
  const select =
    'select id::text as id, name, sku, quantity, price::text as price, category, description from product';
  if (row.sku) {
    const bySku = await tx.execute<StoredProduct[]>(`${select} where lower(sku) = lower(?) for update`, [
      row.sku,
    ]);
    if (bySku[0]) return bySku[0];
  }
  const byName = await tx.execute<StoredProduct[]>(`${select} where lower(name) = lower(?) for update`, [
    row.name,
  ]);
  return byName[0];
}

/**
 * Products (the product API's fields and rules): a new row is created; a known product (by sku, else name)
 * gets the fields that differ through the partial-update use case, whose quantity change is a stock change
 * like any other. Each row runs in a savepoint, so a refused row leaves the rest of the import intact.
 */
export const PRODUCT_IMPORT: ImportKind = {
  columns: COLUMNS,
  requiredColumns: ['name', 'quantity'],
  async apply(tx, record, run) {
    const values = cellValues(record, COLUMNS);
    const row = validateRow<ProductImportRow>(createProductBody, values, run);
    const price = (row.price ?? row.purchasePrice) as number;
    claimRowKeys(run, record, [
      ['name', `name:${row.name.toLowerCase()}`],
      ...(row.sku ? [['sku', `sku:${row.sku.toLowerCase()}`] as [string, string]] : []),
    ]);
    const current = await findProduct(tx, row);
    if (!current) {
      await refusedAs(columnOf, () => tx.transactional(inner => createProduct(inner, { ...row, price })));
      return { outcome: 'created', eventIds: [] };
    }
    const changes: UpdateProductFieldsInput = {};
    if (row.name !== current.name) changes.name = row.name;
    if (row.sku && row.sku !== current.sku) changes.sku = row.sku;
    if (row.quantity !== current.quantity) changes.quantity = row.quantity;
    if (toCents(price) !== numericToCents(current.price)) changes.price = price;
    for (const field of ['category', 'description'] as const)
      if (values[field] !== undefined && (row[field] || null) !== current[field]) changes[field] = row[field];
    if (Object.keys(changes).length === 0) return { outcome: 'unchanged', eventIds: [] };
    await refusedAs(columnOf, () =>
      tx.transactional(inner => updateProductFields(inner, current.id, changes, run.write.user)),
    );
    return { outcome: 'updated', eventIds: [] };
  },
};
