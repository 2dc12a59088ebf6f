import { defineEntity, p } from '@mikro-orm/postgresql';
import type { Role } from './roles.js';
import { transactionTime } from '../shared/database-time.js';

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
    /** Stamped by PostgreSQL (transactionTime). */
    createdAt: p.datetime().defaultRaw('now()').onCreate(transactionTime),
    updatedAt: p.datetime().defaultRaw('now()').onCreate(transactionTime).onUpdate(transactionTime),
  },
});

export class User extends UserSchema.class {}
UserSchema.setClass(User);
