import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { environmentSchema, loadConfig } from '../../config/env.js';

interface AppJson {
  formation: Record<string, { quantity: number }>;
  addons: { plan: string }[];
  env: Record<string, { description: string; value?: string; generator?: string; required?: boolean }>;
}

const appJson = JSON.parse(readFileSync('app.json', 'utf8')) as AppJson;

/** Read by the service but not asked for at deploy: set by the platform, its add-ons, the Procfile, or tuning. */
const NOT_ASKED = {
  PORT: 'the platform',
  DATABASE_URL: 'the PostgreSQL add-on',
  REDIS_URL: 'the Redis add-on',
  RUN_WORKERS: "the Procfile's web line",
  REDIS_PREFIX: 'tuning',
  ENQUEUE_TIMEOUT_MS: 'tuning',
  DB_POOL_MAX: 'tuning',
  OUTBOX_SWEEP_INTERVAL_MS: 'tuning',
  WORKER_LOCK_DURATION_MS: 'tuning',
  WORKER_STALLED_INTERVAL_MS: 'tuning',
  WORKER_CONCURRENCY: 'tuning',
  LOW_STOCK_THRESHOLD: 'tuning',
  LOGIN_RATE_LIMIT_POINTS: 'tuning',
  LOGIN_RATE_LIMIT_SECONDS: 'tuning',
};

describe('app.json (Heroku-style deploy metadata) matches config/env.ts', () => {
  it('When config/env.ts reads a setting, then app.json asks for it (or the platform, an add-on or the Procfile sets it), and app.json names nothing else', () => {
    const settings = Object.keys(environmentSchema.describe().keys as Record<string, unknown>);
    const asked = Object.keys(appJson.env);
    expect(
      asked.filter(name => !settings.includes(name)),
      'in app.json, unknown to config/env.ts',
    ).to.deep.equal([]);
    expect(
      settings.filter(name => !asked.includes(name) && !(name in NOT_ASKED)),
      'read by config/env.ts, missing from app.json',
    ).to.deep.equal([]);
    expect(Object.keys(NOT_ASKED).filter(name => !settings.includes(name))).to.deep.equal([]);
    for (const [name, entry] of Object.entries(appJson.env))
      expect(entry.description, `${name} needs a description`).to.be.a('string').and.not.equal('');
  });

  it("When deployed with app.json's values and generated secrets, then the configuration loads in production, and the add-ons and the Procfile's processes are there", () => {
    const env: Record<string, string> = {
      DATABASE_URL: 'postgres://user:pw@db.example:5432/d1',
      REDIS_URL: 'rediss://:pw@cache.example:6380',
    };
    for (const [name, entry] of Object.entries(appJson.env)) {
      if (entry.generator === 'secret') env[name] = randomBytes(32).toString('hex');
      else if (entry.value !== undefined) env[name] = entry.value;
      else if (entry.required) env[name] = 'https://stockroom.example';
    }
    const config = loadConfig(env);
    expect(config.nodeEnv).to.equal('production');
    expect(config.trustProxy).to.equal(1);
    expect(config.redisTls.rejectUnauthorized).to.equal(false);
    // The secrets production requires are generated, never left to the per-start default.
    for (const name of ['SESSION_SECRET', 'JWT_SECRET'])
      expect(appJson.env[name].generator).to.equal('secret');
    expect(appJson.addons.map(a => a.plan)).to.have.members(['heroku-postgresql', 'heroku-redis']);
    const procfile = readFileSync('Procfile', 'utf8');
    for (const process of Object.keys(appJson.formation))
      expect(procfile).to.match(new RegExp(`^${process}:`, 'm'));
    expect(procfile).to.match(/^release:/m);
  });
});
