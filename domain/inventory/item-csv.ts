import type { CsvColumn } from '../shared/csv-cells.js';
import type { ItemView } from './item.view.js';

/**
 * Columns of the item export; the import reads name, sku, quantity, price, supplierName, minimumQuantity and the
 * optional reorderPoint, orderUpToQuantity.
 */
export const ITEM_CSV_COLUMNS: CsvColumn<ItemView>[] = [
  { header: 'id', key: 'id' },
  { header: 'name', key: 'name' },
  { header: 'sku', key: 'sku' },
  { header: 'quantity', key: 'quantity' },
  { header: 'price', key: 'price' },
  { header: 'totalValue', key: 'totalValue' },
  { header: 'supplierId', key: 'supplierId' },
  { header: 'supplierName', key: 'supplierName' },
  { header: 'minimumQuantity', key: 'minimumQuantity' },
  { header: 'onOrderQuantity', key: 'onOrderQuantity' },
  { header: 'reorderPoint', key: 'reorderPoint' },
  { header: 'orderUpToQuantity', key: 'orderUpToQuantity' },
  { header: 'createdAt', key: 'createdAt' },
  { header: 'updatedAt', key: 'updatedAt' },
];
