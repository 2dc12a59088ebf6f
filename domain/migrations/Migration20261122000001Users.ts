import { Migration } from '@mikro-orm/migrations';

export class Migration20261122000001Users extends Migration {
  override up(): void {
    this.addSql(`
      create table app_user (
        id serial primary key,
        username varchar(255) not null check (length(trim(username)) > 0),
        email varchar(320),
        password_hash text,
        full_name varchar(255),
        picture_url text,
        role varchar(20) not null default 'ROLE_USER' check (role in ('ROLE_USER', 'ROLE_ADMIN')),
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now()
      )`);
    this.addSql('create unique index app_user_username_uq on app_user (lower(username))');
    this.addSql('create unique index app_user_email_uq on app_user (lower(email)) where email is not null');
  }

  override down(): void {
    this.addSql('drop table if exists app_user');
  }
}
