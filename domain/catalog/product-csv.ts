import type { CsvColumn } from '../shared/csv-cells.js';
import type { ProductView } from './product.view.js';

/** Columns of the product export; the import reads name, sku, quantity, price, category, description. */
export const PRODUCT_CSV_COLUMNS: CsvColumn<ProductView>[] = [
  { header: 'id', key: 'id' },
  { header: 'name', key: 'name' },
  { header: 'sku', key: 'sku' },
  { header: 'quantity', key: 'quantity' },
  { header: 'price', key: 'price' },
  { header: 'totalValue', key: 'totalValue' },
  { header: 'category', key: 'category' },
  { header: 'description', key: 'description' },
  { header: 'createdAt', key: 'createdAt' },
  { header: 'updatedAt', key: 'updatedAt' },
];
