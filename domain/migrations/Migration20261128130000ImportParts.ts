import { Migration } from '@mikro-orm/migrations';

/**
 * An import's file is stored in parts of PART_BYTES (`csv_import_part`), written as the upload arrives, so the web
 * process never holds a file whole; `csv_import.size` is its length in bytes. The parts are written in the
 * transaction that registers the import, before its row (hence the deferred foreign key): an upload that
 * fails or is refused leaves nothing behind. Files stored before are split into parts.
 */
export class Migration20261128130000ImportParts extends Migration {
  override up(): void {
    this.addSql(`
      create table csv_import_part (
        import_id bigint not null references csv_import (id) on delete cascade deferrable initially deferred,
        seq integer not null,
        bytes bytea not null,
        primary key (import_id, seq)
      )`);
    this.addSql('alter table csv_import add column size bigint');
    this.addSql(`
      insert into csv_import_part (import_id, seq, bytes)
      select id, g, substring(content from g * 1048576 + 1 for 1048576)
        from csv_import, generate_series(0, greatest(0, (octet_length(content) - 1) / 1048576)) g`);
    this.addSql('update csv_import set size = octet_length(content)');
    this.addSql('alter table csv_import alter column size set not null');
    this.addSql('alter table csv_import drop column content');
  }

  override down(): void {
    this.addSql('alter table csv_import add column content bytea');
    this.addSql(`
      update csv_import i set content = coalesce((select string_agg(p.bytes, ''::bytea order by p.seq)
                                                    from csv_import_part p where p.import_id = i.id), ''::bytea)`);
    this.addSql('alter table csv_import alter column content set not null');
    this.addSql('alter table csv_import drop column size');
    this.addSql('drop table csv_import_part');
  }
}
