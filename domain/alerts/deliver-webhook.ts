import { createHmac } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';

export const SIGNATURE_HEADER = 'X-Stockroom-Signature';
export const TIMESTAMP_HEADER = 'X-Stockroom-Timestamp';

/** `sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`: the receiver checks it and rejects stale timestamps. */
export function signWebhook(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export type DeliveryOutcome = 'delivered' | 'skipped' | 'retry' | 'failed';

/**
 * POSTs one pending webhook delivery. Success -> `delivered`. A failure records the attempt and the error and
 * throws so that BullMQ retries with exponential backoff; on the last attempt the row becomes `failed`.
 * The row stays `pending` until delivered, so a worker killed mid-delivery loses nothing (the job stalls and
 * runs again, and the hourly sweep re-enqueues anything still pending).
 */
export async function deliverWebhook(
  em: EntityManager,
  deliveryId: string,
  options: { secret: string | undefined; lastAttempt: boolean; timeoutMs?: number },
): Promise<DeliveryOutcome> {
  const rows = await em.execute<{ url: string; payload: unknown; status: string }[]>(
    'select url, payload, status from webhook_delivery where id = ?',
    [deliveryId],
  );
  if (rows.length === 0 || rows[0].status !== 'pending') return 'skipped';
  const body = JSON.stringify(rows[0].payload);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    [TIMESTAMP_HEADER]: timestamp,
    'X-Stockroom-Delivery': deliveryId,
  };
  if (options.secret) headers[SIGNATURE_HEADER] = signWebhook(options.secret, timestamp, body);
  let error: string | undefined;
  try {
    const res = await fetch(rows[0].url, {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(options.timeoutMs ?? 5000),
    });
    await res.arrayBuffer().catch(() => undefined);
    if (!res.ok) error = `HTTP ${res.status}`;
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
  }
  if (!error) {
    await em.execute(
      `update webhook_delivery set status = 'delivered', attempts = attempts + 1, delivered_at = now(),
         updated_at = now(), last_error = null where id = ? and status = 'pending'`,
      [deliveryId],
    );
    return 'delivered';
  }
  await em.execute(
    `update webhook_delivery set attempts = attempts + 1, last_error = ?, updated_at = now(),
       status = case when ? then 'failed' else status end where id = ? and status = 'pending'`,
    [error.slice(0, 1000), options.lastAttempt, deliveryId],
  );
  if (options.lastAttempt) return 'failed';
  throw new Error(`webhook delivery ${deliveryId} failed: ${error}`);
}

/** Pending deliveries not touched for a while (the hourly sweep re-enqueues them). */
export async function stalePendingDeliveries(em: EntityManager, olderThanMs: number, limit = 1000) {
  const rows = await em.execute<{ id: string }[]>(
    `select id from webhook_delivery where status = 'pending'
       and updated_at <= now() - make_interval(secs => ?::double precision / 1000)
     order by id limit ?`,
    [olderThanMs, limit],
  );
  return rows.map(r => String(r.id));
}
