import { defineEntity, p } from '@mikro-orm/postgresql';

/**
 * A transactional outbox row (table `outbox_event`), written in the same transaction as the state change it
 * describes. Insert-only: every consumer has its own progress row per event (`outbox_pending`, written with the
 * event), whose marker it sets in the same statement as its effect.
 */
export const OutboxEventSchema = defineEntity({
  name: 'OutboxEvent',
  tableName: 'outbox_event',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    type: p.string().length(60),
    aggregateId: p.string().length(64),
    payload: p.json<Record<string, unknown>>(),
    /** The event's partition (0..15), computed by PostgreSQL from the aggregate: see consumers.ts. */
    part: p.smallint().generated('((hashtext((aggregate_id)::text) & 15))::smallint) stored').nullable(),
    createdAt: p
      .datetime()
      .defaultRaw('now()')
      .onCreate(() => new Date()),
  },
});

export class OutboxEvent extends OutboxEventSchema.class {}
OutboxEventSchema.setClass(OutboxEvent);
