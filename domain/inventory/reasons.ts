/** Reasons of the contract ("Reasons"). Enum values are case-sensitive. */
export const CHANGE_REASONS = [
  'SALE',
  'RETURN',
  'DAMAGED',
  'EXPIRED',
  'RESTOCK',
  'MANUAL_ADJUSTMENT',
  'INVENTORY_COUNT',
  'INITIAL_STOCK',
] as const;

export const DELETION_REASONS = [
  'SCRAPPED',
  'DESTROYED',
  'DAMAGED',
  'EXPIRED',
  'LOST',
  'RETURNED_TO_SUPPLIER',
] as const;

/** Written by the service only. */
export const SYSTEM_REASONS = ['INITIAL_STOCK', 'PRICE_CHANGE', 'MANUAL_ADJUSTMENT'] as const;

/** Input aliases of the reference client, stored under the spec name. */
export const REASON_ALIASES: Readonly<Record<string, string>> = {
  SOLD: 'SALE',
  RETURNED_BY_CUSTOMER: 'RETURN',
  MANUAL_UPDATE: 'MANUAL_ADJUSTMENT',
};

/** Adjust quantity accepts every change reason and every deletion reason. */
export const ADJUST_REASONS = [...new Set<string>([...CHANGE_REASONS, ...DELETION_REASONS])];

/** Every reason a history entry can carry. */
export const ALL_REASONS = [...new Set<string>([...ADJUST_REASONS, ...SYSTEM_REASONS])];

export const normaliseReason = (reason: string): string => REASON_ALIASES[reason] ?? reason;

export const isDeletionReason = (reason: string | undefined): boolean =>
  reason !== undefined && (DELETION_REASONS as readonly string[]).includes(reason);
