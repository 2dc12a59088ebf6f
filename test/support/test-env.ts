import { randomBytes } from 'node:crypto';

/** Environment of the test process: its own database and a unique Redis prefix per run. */
export const TEST_DATABASE_URL =
  process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/stockroom_test';
export const TEST_JWT_SECRET = 'test-secret-that-is-long-enough-0123456789';

export function testEnv(overrides: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DATABASE_URL: TEST_DATABASE_URL,
    REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    REDIS_PREFIX: `t${process.pid}${randomBytes(3).toString('hex')}`,
    JWT_SECRET: TEST_JWT_SECRET,
    SESSION_SECRET: 'test-session-secret-0123456789',
    FRONTEND_URL: 'https://front.example',
    PUBLIC_URL: 'http://127.0.0.1:8080',
    SEED_DEMO_DATA: 'false',
    RUN_WORKERS: 'false',
    ...overrides,
  };
}
