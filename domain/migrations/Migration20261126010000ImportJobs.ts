import { Migration } from '@mikro-orm/migrations';

/**
 * CSV imports get an unguessable public job id (the sequential row id stays internal) and the states of the
 * contract: `applying` (the one short transaction that writes the changes; no longer cancellable) and
 * `cancelled`. The in-flight single-flight index covers `applying` too.
 */
export class Migration20261126010000ImportJobs extends Migration {
  override up(): void {
    this.addSql('alter table csv_import add column public_id text');
    this.addSql(
      `update csv_import set public_id = 'import-' || md5(random()::text || clock_timestamp()::text || id::text)`,
    );
    this.addSql('alter table csv_import alter column public_id set not null');
    this.addSql('create unique index csv_import_public_id_uq on csv_import (public_id)');
    this.addSql('alter table csv_import drop constraint csv_import_state_check');
    this.addSql(
      `alter table csv_import add constraint csv_import_state_check
         check (state in ('queued', 'running', 'applying', 'completed', 'failed', 'cancelled'))`,
    );
    this.addSql('drop index csv_import_in_flight_uq');
    this.addSql(
      `create unique index csv_import_in_flight_uq on csv_import (user_id, kind, file_hash, dry_run, create_suppliers)
         where state in ('queued', 'running', 'applying')`,
    );
    this.addSql('drop index csv_import_unfinished_idx');
    this.addSql(
      `create index csv_import_unfinished_idx on csv_import (updated_at) where state in ('queued', 'running', 'applying')`,
    );
  }

  override down(): void {
    this.addSql(`update csv_import set state = 'failed' where state in ('applying', 'cancelled')`);
    this.addSql('drop index csv_import_unfinished_idx');
    this.addSql(
      `create index csv_import_unfinished_idx on csv_import (updated_at) where state in ('queued', 'running')`,
    );
    this.addSql('drop index csv_import_in_flight_uq');
    this.addSql(
      `create unique index csv_import_in_flight_uq on csv_import (user_id, kind, file_hash, dry_run, create_suppliers)
         where state in ('queued', 'running')`,
    );
    this.addSql('alter table csv_import drop constraint csv_import_state_check');
    this.addSql(
      `alter table csv_import add constraint csv_import_state_check check (state in ('queued', 'running', 'completed', 'failed'))`,
    );
    this.addSql('alter table csv_import drop column public_id');
  }
}
