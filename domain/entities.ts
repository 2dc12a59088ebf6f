import { UserSchema } from './users/user.entity.js';

/** Every entity MikroORM knows about, listed explicitly (no folder discovery). */
export const ENTITIES = [UserSchema] as const;
