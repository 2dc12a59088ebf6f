import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppError } from '../shared/errors.js';
import { numericToCents, toCents } from '../shared/money.js';
import { createSupplierBody } from '../suppliers/suppliers.schemas.js';
import { createSupplier } from '../suppliers/create-supplier.js';
import {
  cellValues,
  claimRowKeys,
  refusedAs,
  RowRejected,
  validateRow,
  type ImportKind,
  type ImportRun,
} from '../imports/import-kind.js';
import { createItemBody } from './inventory.schemas.js';
import { createItem } from './create-item.js';
import { updateItem } from './update-item.js';
import { adjustQuantity } from './adjust-quantity.js';

const COLUMNS = ['name', 'sku', 'quantity', 'price', 'supplierName', 'minimumQuantity'] as const;

/** The API's create-item rules, with the supplier named instead of referenced by id. */
const rowSchema = createItemBody
  .fork(['supplierId'], field => field.optional())
  .keys({ supplierName: createSupplierBody.extract('name').optional() });

interface ItemImportRow {
  name: string;
  sku?: string | null;
  quantity: number;
  price: number;
  supplierName?: string;
  minimumQuantity: number;
}

interface StoredItem {
  id: string;
  name: string;
  sku: string | null;
  quantity: number;
  price: string;
  supplier_id: string;
  minimum_quantity: number;
}

/** The column a refusal of the item use cases is about. */
function columnOf(error: AppError): string | null {
  if (error.messageKey === 'inventory.item.sku.duplicate') return 'sku';
  if (error.messageKey === 'error.not.found.supplier') return 'supplierName';
  if (error.messageKey.includes('duplicate')) return 'name';
  return error.fieldErrors[0]?.field ?? null;
}

/** The item a row means: by sku when it has one, else (or when no sku matches) by name; locked until commit. */
async function findItem(tx: EntityManager, row: ItemImportRow): Promise<StoredItem | undefined> {
  const rows = await tx.execute<StoredItem[]>(
    `select id, name, sku, quantity, price::text as price, supplier_id, minimum_quantity
       from inventory_item
      where (?::text is not null and lower(sku) = lower(?::text)) or lower(name) = lower(?)
      order by (lower(sku) is not distinct from lower(?::text)) desc
      limit 1
        for update`,
    [row.sku || null, row.sku || null, row.name, row.sku || null],
  );
  return rows[0];
}

/** A supplier by name (case-insensitive); created when the import allows it, else the row is refused. */
async function supplierIdOf(tx: EntityManager, name: string, run: ImportRun): Promise<string> {
  const key = name.toLowerCase();
  const known = run.suppliers.get(key);
  if (known) return known;
  const rows = await tx.execute<{ id: string }[]>('select id from supplier where lower(name) = lower(?)', [
    name,
  ]);
  let id = rows[0]?.id;
  if (!id) {
    if (!run.createSuppliers)
      throw new RowRejected([{ column: 'supplierName', messageKey: 'error.not.found.supplier' }]);
    const created = await refusedAs(
      () => 'supplierName',
      () => tx.transactional(inner => createSupplier(inner, { name }, run.write)),
    );
    id = created.id;
  }
  run.suppliers.set(key, id);
  return id;
}

/**
 * Items: a new row is created (INITIAL_STOCK for its stock); a known item gets its fields through the PUT
 * use case (a price change writes PRICE_CHANGE) and its counted quantity as an INVENTORY_COUNT adjustment
 * through the guarded update. Columns the file leaves out keep their stored values.
 */
export const ITEM_IMPORT: ImportKind = {
  columns: COLUMNS,
  requiredColumns: ['name', 'quantity', 'price'],
  async apply(tx, record, run) {
    const values = cellValues(record, COLUMNS);
    const row = validateRow<ItemImportRow>(rowSchema, values, run);
    const sku = row.sku ? row.sku : null;
    claimRowKeys(run, record, [
      ['name', `name:${row.name.toLowerCase()}`],
      ...(sku ? [['sku', `sku:${sku.toLowerCase()}`] as [string, string]] : []),
    ]);
    const current = await findItem(tx, row);
    const supplierId = row.supplierName
      ? await supplierIdOf(tx, row.supplierName, run)
      : current?.supplier_id;
    if (!supplierId)
      throw new RowRejected([{ column: 'supplierName', messageKey: 'inventory.item.supplier.required' }]);
    if (!current) {
      const created = await refusedAs(columnOf, () =>
        createItem(tx, { ...row, sku, supplierId, minimumQuantity: row.minimumQuantity }, run.write),
      );
      return { outcome: 'created', eventIds: created.eventIds };
    }
    const target = {
      name: row.name,
      sku: sku ?? current.sku,
      price: row.price,
      supplierId,
      minimumQuantity: values.minimumQuantity === undefined ? current.minimum_quantity : row.minimumQuantity,
    };
    const fieldsDiffer =
      target.name !== current.name ||
      target.sku !== current.sku ||
      toCents(target.price) !== numericToCents(current.price) ||
      target.supplierId !== current.supplier_id ||
      target.minimumQuantity !== current.minimum_quantity;
    const eventIds: string[] = [];
    if (fieldsDiffer) {
      const updated = await refusedAs(columnOf, () =>
        updateItem(tx, { ...target, id: current.id, quantity: current.quantity }, run.write),
      );
      eventIds.push(...updated.eventIds);
    }
    const delta = row.quantity - current.quantity;
    if (delta !== 0) {
      const adjusted = await refusedAs(columnOf, () =>
        adjustQuantity(
          tx,
          { id: current.id, delta, reason: 'INVENTORY_COUNT', expectedQuantity: current.quantity },
          run.write,
        ),
      );
      eventIds.push(...adjusted.eventIds);
    }
    return { outcome: fieldsDiffer || delta !== 0 ? 'updated' : 'unchanged', eventIds };
  },
};
