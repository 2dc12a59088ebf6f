import { Migration } from '@mikro-orm/migrations';

/**
 * Pushes every change of an account to the web processes, which cache accounts in memory (DESIGN.md, Auth):
 * an update or delete of an `app_user` row notifies `stockroom_account_changed` with the row's id, a truncate
 * notifies `*` (drop everything). The notification
 * is delivered at commit, so a role change or a deleted account takes effect on every process at once.
 */
export class Migration20261123010000AccountChanges extends Migration {
  override up(): void {
    this.addSql(`
      create function app_user_notify_change() returns trigger language plpgsql as $$
      begin
        if tg_op = 'TRUNCATE' then
          perform pg_notify('stockroom_account_changed', '*');
        else
          perform pg_notify('stockroom_account_changed', old.id::text);
        end if;
        return null;
      end $$`);
    this.addSql(`
      create trigger app_user_notify_change after update or delete on app_user
      for each row execute function app_user_notify_change()`);
    this.addSql(`
      create trigger app_user_notify_truncate after truncate on app_user
      for each statement execute function app_user_notify_change()`);
  }

  override down(): void {
    this.addSql('drop trigger if exists app_user_notify_truncate on app_user');
    this.addSql('drop trigger if exists app_user_notify_change on app_user');
    this.addSql('drop function if exists app_user_notify_change()');
  }
}
