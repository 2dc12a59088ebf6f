import { ProductSchema } from './catalog/product.entity.js';
import { UserSchema } from './users/user.entity.js';

/** Every entity MikroORM knows about, listed explicitly (no folder discovery). */
export const ENTITIES = [UserSchema, ProductSchema] as const;
