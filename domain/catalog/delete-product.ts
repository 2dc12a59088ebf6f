import type { EntityManager } from '@mikro-orm/postgresql';
import { NotFoundError } from '../shared/errors.js';

export async function deleteProduct(em: EntityManager, id: string): Promise<void> {
  const rows = await em.execute<{ id: string }[]>('delete from product where id = ? returning id', [id]);
  if (!rows[0]) throw new NotFoundError('product.delete.not.found', { params: { id } });
}
