import { TransactionPropagation, type EntityManager } from '@mikro-orm/postgresql';
import type { WriteContext } from '../shared/write-context.js';
import { isUuid } from '../shared/sql.js';
import { ValidationError } from '../shared/errors.js';
import { duplicateItemName, duplicateSku, supplierNotFound } from './item-errors.js';
import { ITEM_COLUMNS, toItemView, type ItemRow, type ItemView } from './item.view.js';
import { recordStockChanged } from './stock-event.js';
import { recordItemChange } from './item-change.js';

export interface ItemInput {
  name: string;
  quantity: number;
  price: number;
  supplierId: string;
  minimumQuantity: number;
  sku?: string | null;
  /** Absent: keep the stored value (none on create); null: computed. */
  reorderPoint?: number | null;
  orderUpToQuantity?: number | null;
}

/** An item's own replenishment levels as they end up: the input's where given, else the stored ones. */
export interface OrderLevels {
  reorderPoint: number | null;
  orderUpToQuantity: number | null;
}

/** The levels after applying `input` to `stored`; 400 unless orderUpToQuantity > reorderPoint when both are set. */
export function orderLevelsOf(input: ItemInput, stored: OrderLevels): OrderLevels {
  const levels = {
    reorderPoint: input.reorderPoint !== undefined ? input.reorderPoint : stored.reorderPoint,
    orderUpToQuantity:
      input.orderUpToQuantity !== undefined ? input.orderUpToQuantity : stored.orderUpToQuantity,
  };
  if (
    levels.reorderPoint !== null &&
    levels.orderUpToQuantity !== null &&
    levels.orderUpToQuantity <= levels.reorderPoint
  )
    throw new ValidationError('inventory.item.order.up.to.above', {
      fieldErrors: [{ field: 'orderUpToQuantity', messageKey: 'inventory.item.order.up.to.above' }],
    });
  return levels;
}

export interface StockWriteResult {
  item: ItemView;
  /** Outbox events written by the transaction; published after commit. */
  eventIds: string[];
  /** When the change happened (its stock event's time), where the caller needs it. */
  at?: string;
}

/**
 * Inside a caller's transaction (an Idempotency-Key write, a CSV import) the use case joins it instead of
 * opening a savepoint: it refuses before it writes, and any database error fails the caller's transaction
 * anyway. Alone, it opens its own transaction as before. A fresh object per call: MikroORM writes the
 * transaction context into the options it is given.
 */
export const joinCaller = () => ({ propagation: TransactionPropagation.REQUIRED });

export const skuOf = (input: ItemInput): string | null => (input.sku ? input.sku : null);

/** Duplicate name, then duplicate sku (409), then supplier (404): the contract's order. */
export async function checkItemClashes(
  em: EntityManager,
  input: ItemInput,
  exceptId?: string,
): Promise<void> {
  const sku = skuOf(input);
  const rows = await em.execute<{ name_clash: boolean; sku_clash: boolean; supplier_exists: boolean }[]>(
    `select
       exists (select 1 from inventory_item where lower(name) = lower(?) and id is distinct from ?::uuid) as name_clash,
       (?::text is not null and exists (select 1 from inventory_item where lower(sku) = lower(?::text)
          and id is distinct from ?::uuid)) as sku_clash,
       (?::boolean and exists (select 1 from supplier where id = ?::uuid)) as supplier_exists`,
    [
      input.name,
      exceptId ?? null,
      sku,
      sku,
      exceptId ?? null,
      isUuid(input.supplierId),
      isUuid(input.supplierId) ? input.supplierId : null,
    ],
  );
  if (rows[0].name_clash) throw duplicateItemName();
  if (rows[0].sku_clash) throw duplicateSku();
  if (!rows[0].supplier_exists) throw supplierNotFound();
}

/** Item creation: one transaction = the item, its `created` item change + (quantity > 0) an INITIAL_STOCK outbox event. */
export async function createItem(
  em: EntityManager,
  input: ItemInput,
  context: WriteContext,
): Promise<StockWriteResult> {
  const levels = orderLevelsOf(input, { reorderPoint: null, orderUpToQuantity: null });
  return em.transactional(async tx => {
    await checkItemClashes(tx, input);
    const rows = await tx.execute<ItemRow[]>(
      `with i as (
         insert into inventory_item (name, sku, quantity, price, minimum_quantity, supplier_id, created_by,
                                     reorder_point, order_up_to_quantity, created_at, updated_at)
         select ?, ?, ?, ?::numeric, ?, ?::uuid, ?, ?::integer, ?::integer, t.at, t.at
           from (select clock_timestamp() as at) t returning *)
       select ${ITEM_COLUMNS} from i join supplier s on s.id = i.supplier_id`,
      [
        input.name,
        skuOf(input),
        input.quantity,
        String(input.price),
        input.minimumQuantity,
        input.supplierId,
        context.user,
        levels.reorderPoint,
        levels.orderUpToQuantity,
      ],
    );
    const row = rows[0];
    const at = await recordItemChange(tx, row.id, 'created');
    const eventIds: string[] = [];
    if (input.quantity > 0)
      eventIds.push(
        await recordStockChanged(
          tx,
          row,
          { change: input.quantity, quantityBefore: 0, reason: 'INITIAL_STOCK', at },
          context,
        ),
      );
    return { item: toItemView(row), eventIds };
  }, joinCaller());
}
