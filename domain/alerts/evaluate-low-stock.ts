import type { SqlRun } from '../shared/native-transaction.js';
import { STOCK_CHANGED } from '../outbox/events.js';
import { allMarkedCheck, markedCte, pendingBatch, pendingEventsSql } from '../outbox/pending-events.js';
import { byKey } from '../shared/sql.js';
import { ALERTS_CONSUMER, ASYNC_COMMIT_SQL } from '../outbox/consumers.js';
import type { ConsumerBatch } from '../outbox/drain-consumer.js';

export const LOW_STOCK_OPENED = 'low_stock.opened';

const isLow = (e: PendingRow) => !e.deleted && e.minimumQuantity > 0 && e.quantityAfter < e.minimumQuantity;

/** An alert as the batch leaves it: an existing open one (`id`) or one this batch opens. */
interface AlertState {
  id?: string;
  itemId: string;
  itemName: string;
  supplierId: string | null;
  quantity: number;
  minimumQuantity: number;
  raisedAt: string;
  openEventId: string;
  /** The webhook body of a new alert: the item as it crossed (the alert's id is added when it is inserted). */
  webhook?: Record<string, unknown>;
  closedAt: string | null;
  closeEventId: string | null;
}

/**
 * A pending event with its item's open alert when there is one: the payload's fields the walk needs, taken out
 * by the statement, so each event is one row object decoded once (no payload object parsed from its JSON text).
 */
interface PendingRow {
  id: string;
  type: string;
  itemId: string;
  itemName: string;
  supplierId: string | null;
  supplierName: string | null;
  quantityAfter: number;
  minimumQuantity: number;
  deleted: boolean;
  occurredAt: string;
  alert_id: string | null;
  alert_item_name: string | null;
  alert_quantity: number | null;
  alert_minimum_quantity: number | null;
  /** An order event (purchase_order.*): its webhook body without `eventId`; null for stock events. */
  order_event: Record<string, unknown> | null;
}

/**
 * The low-stock consumer's batch, edge-triggered: an alert opens when an item goes below its minimum (one open
 * alert per item, a partial unique index guarantees it) and closes when it is back at or above it (or
 * deleted). The batch's events are walked per item in id order in memory, so an item that crosses several
 * times in one batch gets one alert per crossing; then every alert is written set-based (closing/updating the
 * alerts that were open, inserting the new ones with their webhook deliveries, and the deliveries of order
 * events) and the markers are set, in ONE
 * statement in the caller's transaction. Ids of new webhook deliveries are pushed to `deliveries` for after the
 * commit. Its `held` fast path is the same batch as two autocommit statements (pendingBatch).
 */
export const evaluateLowStock = (webhookUrl: string | undefined, deliveries: string[] = []): ConsumerBatch =>
  pendingBatch<PendingRow>(pendingWithOpenAlertsSql, (sql, events) =>
    writeBatch(sql, events, webhookUrl, deliveries),
  );

/** The alerts the batch's events leave behind (walked per item in id order), the open ones it found first. */
function walkAlerts(events: PendingRow[]): AlertState[] {
  const stock = events.filter(e => e.type === STOCK_CHANGED);
  const current = new Map<string, AlertState>();
  for (const e of stock)
    if (e.alert_id !== null && !current.has(e.itemId))
      current.set(e.itemId, {
        id: e.alert_id,
        itemId: e.itemId,
        itemName: String(e.alert_item_name),
        supplierId: null,
        quantity: Number(e.alert_quantity),
        minimumQuantity: Number(e.alert_minimum_quantity),
        raisedAt: '',
        openEventId: '',
        closedAt: null,
        closeEventId: null,
      });
  const touched: AlertState[] = [...current.values()];
  for (const p of stock) {
    const id = p.id;
    const open = current.get(p.itemId);
    if (isLow(p) && !open) {
      const alert: AlertState = {
        itemId: p.itemId,
        itemName: p.itemName,
        supplierId: p.supplierId,
        quantity: p.quantityAfter,
        minimumQuantity: p.minimumQuantity,
        raisedAt: new Date(p.occurredAt).toISOString(),
        openEventId: id,
        closedAt: null,
        closeEventId: null,
      };
      alert.webhook = {
        type: LOW_STOCK_OPENED,
        itemId: p.itemId,
        itemName: p.itemName,
        supplierId: p.supplierId,
        supplierName: p.supplierName,
        quantity: p.quantityAfter,
        minimumQuantity: p.minimumQuantity,
        raisedAt: alert.raisedAt,
        eventId: id,
      };
      current.set(p.itemId, alert);
      touched.push(alert);
    } else if (open && isLow(p)) {
      Object.assign(open, {
        quantity: p.quantityAfter,
        minimumQuantity: p.minimumQuantity,
        itemName: p.itemName,
      });
    } else if (open) {
      Object.assign(open, { closedAt: p.occurredAt, closeEventId: id, quantity: p.quantityAfter });
      current.delete(p.itemId);
    }
  }
  return touched;
}

/** Pending events in id order (at most `limit`), each with its item's open alert when there is one. */
const pendingWithOpenAlertsSql = (parts: string, limit: string, itemId: string) => `
select o.id::text as id, o.type, p->>'itemId' as "itemId", p->>'itemName' as "itemName",
       p->>'supplierId' as "supplierId", p->>'supplierName' as "supplierName",
       (p->>'quantityAfter')::integer as "quantityAfter", (p->>'minimumQuantity')::integer as "minimumQuantity",
       coalesce((p->>'deleted')::boolean, false) as deleted, p->>'occurredAt' as "occurredAt",
       a.id::text as alert_id, a.item_name as alert_item_name,
       a.quantity as alert_quantity, a.minimum_quantity as alert_minimum_quantity,
       case when starts_with(o.type, 'purchase_order.') then o.payload end as order_event
  from (${pendingEventsSql(ALERTS_CONSUMER, parts, limit, itemId)}) o
 cross join lateral (select o.payload as p) j
  left join lateral ${byKey(`select a.id, a.item_name, a.quantity, a.minimum_quantity from low_stock_alert a
                              where a.item_id = (o.payload->>'itemId')::uuid and a.closed_at is null`)} a
    on o.type = '${STOCK_CHANGED}'
 order by o.id`;

/**
 * ONE statement: the alerts that were open get their final quantity (and close time); then (the insert waits
 * for the update: it frees the item's "one open alert" slot before a new alert of the same item takes it) the
 * new ones are inserted in event order, each with its webhook delivery when a URL is configured; then the
 * markers (its own progress rows, which no other consumer writes). A batch that opened no webhook
 * delivery has no effect outside PostgreSQL, so it commits without waiting for the WAL flush. Returns how many
 * events it applied; the new deliveries' ids go to `deliveries`. An open alert is found by its id (byKey) and
 * updated by its address (a TID scan): joined by id, the consumers' generic plan (consumerPool) read the whole
 * alert table's primary key for every batch that updated one. Only this consumer, on the items of the
 * partitions it holds, updates alerts, so the address read in the statement's snapshot is still the row's.
 */
async function writeBatch(
  sql: SqlRun,
  events: PendingRow[],
  webhookUrl: string | undefined,
  deliveries: string[],
): Promise<number> {
  if (events.length === 0) return 0;
  const alerts = walkAlerts(events);
  const [row] = await sql<{ deliveries: string[] }>(WRITE_BATCH_SQL, [
    JSON.stringify(
      alerts
        .filter(a => a.id !== undefined)
        .map(a => ({
          id: a.id,
          quantity: a.quantity,
          minimum_quantity: a.minimumQuantity,
          item_name: a.itemName,
          closed_at: a.closedAt,
          close_event_id: a.closeEventId,
        })),
    ),
    JSON.stringify(
      alerts
        .filter(a => a.id === undefined)
        .map(a => ({
          item_id: a.itemId,
          item_name: a.itemName,
          supplier_id: a.supplierId,
          quantity: a.quantity,
          minimum_quantity: a.minimumQuantity,
          raised_at: a.raisedAt,
          open_event_id: a.openEventId,
          closed_at: a.closedAt,
          close_event_id: a.closeEventId,
          webhook: a.webhook,
        })),
    ),
    webhookUrl ?? null,
    events.map(e => e.id),
    JSON.stringify(orderWebhooks(events)),
  ]);
  deliveries.push(...row.deliveries);
  return events.length;
}

/**
 * The signed webhooks of the batch's order events (purchase_order.ordered, .received, .cancelled, written in the
 * order's transaction by domain/purchasing/order-events.ts): the event's body with its outbox id as `eventId`,
 * one delivery per event (the delivery is inserted with the event's marker), delivered like a low-stock one.
 */
const orderWebhooks = (events: PendingRow[]) =>
  events
    .filter(e => e.order_event !== null)
    .map(e => ({ event_id: e.id, type: e.type, body: { ...e.order_event, eventId: e.id } }));

const WRITE_BATCH_SQL = `
with updated as (
  update low_stock_alert a set quantity = x.quantity, minimum_quantity = x.minimum_quantity,
         item_name = x.item_name, closed_at = x.closed_at, close_event_id = x.close_event_id
    from jsonb_to_recordset($1::jsonb) as x(id bigint, quantity int, minimum_quantity int, item_name varchar,
         closed_at timestamptz, close_event_id bigint)
   cross join lateral ${byKey('select k.ctid from low_stock_alert k where k.id = x.id')} k
   where a.ctid = k.ctid
  returning 1
), x as (
  select * from jsonb_to_recordset($2::jsonb) as x(item_id uuid, item_name varchar, supplier_id uuid,
    quantity int, minimum_quantity int, raised_at varchar, open_event_id bigint, closed_at timestamptz,
    close_event_id bigint, webhook jsonb)
   where (select count(*) from updated) >= 0
), a as (
  insert into low_stock_alert (item_id, item_name, supplier_id, quantity, minimum_quantity, raised_at,
    closed_at, open_event_id, close_event_id)
  select item_id, item_name, supplier_id, quantity, minimum_quantity, raised_at::timestamptz, closed_at,
         open_event_id, close_event_id
    from x order by open_event_id
  returning id, open_event_id
), d as (
  insert into webhook_delivery (alert_id, event_type, url, payload)
  select a.id, '${LOW_STOCK_OPENED}', $3::text, x.webhook || jsonb_build_object('alertId', a.id::text)
    from a join x using (open_event_id)
   where $3::text is not null
   order by a.open_event_id
  returning id
), od as (
  insert into webhook_delivery (event_type, url, payload)
  select x.type, $3::text, x.body
    from jsonb_to_recordset($5::jsonb) as x(event_id bigint, type varchar, body jsonb)
   where $3::text is not null
   order by x.event_id
  returning id
), ${markedCte(ALERTS_CONSUMER, '$4')}
select array(select id::text from (select id from d union all select id from od) w order by id) as deliveries,
       case when not exists (select 1 from d) and not exists (select 1 from od) then ${ASYNC_COMMIT_SQL} end
         as async_commit,
       ${allMarkedCheck(ALERTS_CONSUMER, 'cardinality($4::bigint[])')}`;
