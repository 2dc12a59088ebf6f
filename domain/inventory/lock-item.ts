import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { isUuid } from '../shared/sql.js';
import { InventoryItem } from './inventory-item.entity.js';
import { itemNotFound, staleItem } from './item-errors.js';

/**
 * The first steps of an item write in the unit of work, in the contract's order: 404 -> 412 (`If-Match`). The
 * item's row is locked (FOR UPDATE, the item's row only) for the transaction, so what the change records as
 * "before" is exact; its supplier is loaded after (for the record and the events). Both are read from the
 * database even when the EntityManager holds them already: the locked row is the truth.
 */
export async function lockItem(
  tx: EntityManager,
  id: string,
  expectedVersion: number | undefined,
): Promise<InventoryItem> {
  if (!isUuid(id)) throw itemNotFound();
  const item = await tx.findOne(InventoryItem, id, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  if (!item) throw itemNotFound();
  if (expectedVersion !== undefined && item.version !== expectedVersion) throw staleItem();
  await tx.populate(item, ['supplier'], { refresh: true });
  return item;
}

/** The item after a change: a new version (its ETag). */
export const bumpVersion = (item: InventoryItem): void => {
  item.version += 1;
};
