import { Migration } from '@mikro-orm/migrations';

/**
 * CSV imports: the uploaded file (so a worker in any process can read it, and a killed worker's job can run
 * again), who asked and in which language, state, progress and the final report. At most one import of the
 * same file, kind and options per user is in flight (partial unique index): a repeat answers the first.
 */
export class Migration20261123120000CsvImports extends Migration {
  override up(): void {
    this.addSql(`
      create table csv_import (
        id bigserial primary key,
        kind text not null check (kind in ('items', 'products')),
        file_hash char(64) not null,
        content bytea not null,
        dry_run boolean not null,
        create_suppliers boolean not null default false,
        language text not null default 'en',
        user_id integer not null references app_user (id) on delete cascade,
        requested_by text not null,
        correlation_id text,
        state text not null default 'queued' check (state in ('queued', 'running', 'completed', 'failed')),
        rows_read integer not null default 0,
        rows_total integer,
        report jsonb,
        attempts integer not null default 0,
        created_at timestamptz not null default now(),
        started_at timestamptz,
        finished_at timestamptz,
        updated_at timestamptz not null default now()
      )`);
    this.addSql(`
      create unique index csv_import_in_flight_uq on csv_import (user_id, kind, file_hash, dry_run, create_suppliers)
        where state in ('queued', 'running')`);
    this.addSql(
      `create index csv_import_unfinished_idx on csv_import (updated_at) where state in ('queued', 'running')`,
    );
  }

  override down(): void {
    this.addSql('drop table if exists csv_import');
  }
}
