import { defineEntity, p } from '@mikro-orm/postgresql';
import type { Role } from './roles.js';

export const UserSchema = defineEntity({
  name: 'User',
  tableName: 'app_user',
  properties: {
    id: p.integer().primary().autoincrement(),
    username: p.string().length(255),
    email: p.string().length(320).nullable(),
    passwordHash: p.text().nullable().hidden().lazy(),
    fullName: p.string().length(255).nullable(),
    pictureUrl: p.text().nullable(),
    role: p.string().length(20).$type<Role>().default('ROLE_USER'),
    createdAt: p
      .datetime()
      .defaultRaw('now()')
      .onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .defaultRaw('now()')
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

export class User extends UserSchema.class {}
UserSchema.setClass(User);
