import type { EntityManager } from '@mikro-orm/postgresql';
import { itemHolds } from './create-item.js';
import { duplicateItemName } from './item-errors.js';
import { itemViewOf, type ItemView } from './item.view.js';
import { recordItemChange } from './item-change.js';
import { bumpVersion, lockItem } from './lock-item.js';

/** The rename: 404 -> 412 -> 409 duplicate (case-insensitive) -> renamed (an item change). No stock change, so no history entry. */
export async function renameItem(
  em: EntityManager,
  input: { id: string; name: string; expectedVersion?: number },
): Promise<ItemView> {
  return em.transactional(async tx => {
    const item = await lockItem(tx, input.id, input.expectedVersion);
    if (await itemHolds(tx, 'name', input.name, item.id)) throw duplicateItemName();
    item.name = input.name;
    bumpVersion(item);
    await tx.flush();
    await recordItemChange(tx, item.id, 'updated');
    return itemViewOf(item);
  });
}
