import type { EntityManager } from '@mikro-orm/postgresql';
import { isUuid } from '../shared/sql.js';
import { duplicateItemName, itemNotFound, staleItem } from './item-errors.js';
import { ITEM_COLUMNS, toItemView, type ItemRow, type ItemView } from './item.view.js';
import { recordItemChange } from './item-change.js';

/** The rename: 404 -> 409 duplicate (case-insensitive) -> renamed (an item change). No stock change, so no history entry. */
export async function renameItem(
  em: EntityManager,
  input: { id: string; name: string; expectedVersion?: number },
): Promise<ItemView> {
  if (!isUuid(input.id)) throw itemNotFound();
  return em.transactional(async tx => {
    const current = await tx.execute<{ version: number }[]>(
      'select version from inventory_item where id = ? for update',
      [input.id],
    );
    if (current.length === 0) throw itemNotFound();
    if (input.expectedVersion !== undefined && current[0].version !== input.expectedVersion)
      throw staleItem();
    const clash = await tx.execute('select 1 from inventory_item where lower(name) = lower(?) and id <> ?', [
      input.name,
      input.id,
    ]);
    if (clash.length > 0) throw duplicateItemName();
    const rows = await tx.execute<ItemRow[]>(
      `update inventory_item i set name = ?, version = i.version + 1, updated_at = clock_timestamp()
         from supplier s where s.id = i.supplier_id and i.id = ?
       returning ${ITEM_COLUMNS}`,
      [input.name, input.id],
    );
    await recordItemChange(tx, input.id, 'updated');
    return toItemView(rows[0]);
  });
}
