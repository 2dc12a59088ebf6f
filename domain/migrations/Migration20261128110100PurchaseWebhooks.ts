import { Migration } from '@mikro-orm/migrations';

/**
 * Webhook deliveries of purchase orders (`purchase_order.ordered`, `.received`, `.cancelled`) have no alert:
 * written in the order's transaction, they are the outbox of those events, delivered and retried as the
 * low-stock ones are.
 */
export class Migration20261128110100PurchaseWebhooks extends Migration {
  override up(): void {
    this.addSql('alter table webhook_delivery alter column alert_id drop not null');
  }

  override down(): void {
    this.addSql('delete from webhook_delivery where alert_id is null');
    this.addSql('alter table webhook_delivery alter column alert_id set not null');
  }
}
