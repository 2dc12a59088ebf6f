import { ConflictError, NotFoundError, PreconditionFailedError, ValidationError } from '../shared/errors.js';

export const orderNotFound = () => new NotFoundError('purchase.order.not.found');
export const receiptNotFound = () => new NotFoundError('purchase.receipt.not.found');
export const staleOrder = () => new PreconditionFailedError('purchase.order.stale');
/** The action is not allowed in the order's current status. */
export const wrongStatus = (status: string) =>
  new ConflictError('purchase.order.status', { params: { status } });
export const supplierMismatch = (itemId: string) =>
  new ConflictError('purchase.line.supplier.mismatch', { params: { itemId } });
export const totalTooLarge = () =>
  new ValidationError('purchase.total.max', {
    fieldErrors: [{ field: 'lines', messageKey: 'purchase.total.max' }],
  });
