import { defineEntity, p } from '@mikro-orm/postgresql';

/**
 * A transactional outbox row (table `outbox_event`), written in the same transaction as the state change it
 * describes. Every consumer has its own completion marker, set in the same transaction as its effect.
 */
export const OutboxEventSchema = defineEntity({
  name: 'OutboxEvent',
  tableName: 'outbox_event',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    type: p.string().length(60),
    aggregateId: p.string().length(64),
    payload: p.json<Record<string, unknown>>(),
    createdAt: p.datetime().onCreate(() => new Date()),
    historyDoneAt: p.datetime().nullable(),
    alertsDoneAt: p.datetime().nullable(),
    analyticsDoneAt: p.datetime().nullable(),
  },
});

export class OutboxEvent extends OutboxEventSchema.class {}
OutboxEventSchema.setClass(OutboxEvent);
