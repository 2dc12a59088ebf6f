/** What the integrity check can find wrong with an item. */
export type DriftKind =
  'quantity_mismatch' | 'chain_break' | 'negative_quantity' | 'value_mismatch' | 'on_order_mismatch';

export interface Drift {
  itemId: string;
  kind: DriftKind;
  detail: string;
  entryIds: string[];
}
