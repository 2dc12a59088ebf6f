import { Migration } from '@mikro-orm/migrations';

const CONSUMERS = [
  { code: 1, marker: 'history_done_at' },
  { code: 2, marker: 'alerts_done_at' },
  { code: 3, marker: 'analytics_done_at' },
];

/**
 * Each outbox consumer gets its own progress rows instead of a marker column on the shared outbox row: one row
 * per event and consumer (`consumer`: 1 stock history, 2 low-stock alerts, 3 analytics), written by the statement
 * that inserts the event and marked `done_at` by the consumer in the same statement as its effect. The three
 * consumers no longer update (and lock) the same rows: with one shared row, a consumer whose statement met a
 * row another consumer had just marked re-checked it (EvalPlanQual, whose set-up copies the executor state of
 * the whole statement, a visible share of the worker's PostgreSQL CPU) or waited for its lock. The outbox
 * itself becomes insert-only. Existing markers are carried over.
 */
export class Migration20261124120000OutboxPending extends Migration {
  override up(): void {
    this.addSql(
      'create table outbox_pending (consumer smallint not null, part smallint not null, id bigint not null, done_at timestamptz)',
    );
    this.addSql(`
      insert into outbox_pending (consumer, part, id, done_at)
      select c.code, o.part, o.id, case c.code ${CONSUMERS.map(c => `when ${c.code} then o.${c.marker}`).join(' ')} end
        from outbox_event o cross join (values ${CONSUMERS.map(c => `(${c.code}::smallint)`).join(', ')}) c(code)
       order by o.id, c.code`);
    this.addSql(
      'create index outbox_pending_idx on outbox_pending (consumer, part, id) where done_at is null',
    );
    // Every row is updated once: vacuum early, so the pending index does not fill with entries of done rows.
    this.addSql(
      'alter table outbox_pending set (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.02, autovacuum_vacuum_cost_delay = 0)',
    );
    for (const { marker } of CONSUMERS)
      this.addSql(`drop index if exists outbox_${marker.replace('_done_at', '')}_pending_idx`);
    this.addSql(`alter table outbox_event ${CONSUMERS.map(c => `drop column ${c.marker}`).join(', ')}`);
    this.addSql(
      'alter table outbox_event reset (autovacuum_vacuum_scale_factor, autovacuum_vacuum_insert_scale_factor, autovacuum_vacuum_cost_delay)',
    );
  }

  override down(): void {
    this.addSql(
      `alter table outbox_event ${CONSUMERS.map(c => `add column ${c.marker} timestamptz`).join(', ')}`,
    );
    for (const { code, marker } of CONSUMERS) {
      this.addSql(
        `update outbox_event o set ${marker} = p.done_at from outbox_pending p where p.consumer = ${code} and p.id = o.id`,
      );
      this.addSql(
        `create index outbox_${marker.replace('_done_at', '')}_pending_idx on outbox_event (part, id) where ${marker} is null`,
      );
    }
    this.addSql('drop table outbox_pending');
  }
}
