import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../config/env.js';

describe('Configuration', () => {
  const expectRejected = (env: Record<string, string>, variable: string) => {
    let error: unknown;
    try {
      loadConfig(env);
    } catch (e) {
      error = e;
    }
    expect(error, `expected ${variable} to be rejected`).to.be.instanceOf(ConfigError);
    expect((error as ConfigError).variable).to.equal(variable);
    expect((error as ConfigError).message).to.contain(variable);
  };

  it('When nothing is set, then the defaults run against local PostgreSQL and Redis', () => {
    const config = loadConfig({});
    expect(config.port).to.equal(8080);
    expect(config.databaseUrl).to.equal('postgres://postgres@127.0.0.1:5432/stockroom');
    expect(config.redisUrl).to.equal('redis://127.0.0.1:6379');
    expect(config.corsOrigins).to.deep.equal(['http://localhost:5173']);
    expect(config.jwtTtlSeconds).to.equal(36000);
    expect(config.seedDemoData).to.equal(true);
    expect(config.jwtSecret.length).to.be.at.least(32);
    expect(Object.isFrozen(config)).to.equal(true);
    expect(Object.isFrozen(config.oidc)).to.equal(true);
  });

  it('When a value is bad, then loading fails naming the variable', () => {
    expectRejected({ PORT: 'eighty' }, 'PORT');
    expectRejected({ PORT: '70000' }, 'PORT');
    expectRejected({ DATABASE_URL: 'mysql://x/y' }, 'DATABASE_URL');
    expectRejected({ REDIS_URL: 'not a url' }, 'REDIS_URL');
    expectRejected({ APP_DEMO_READONLY: 'perhaps' }, 'APP_DEMO_READONLY');
    expectRejected({ LOG_LEVEL: 'loud' }, 'LOG_LEVEL');
    expectRejected({ JWT_TTL: 'forever' }, 'JWT_TTL');
    expectRejected({ CORS_ORIGINS: 'https://ok.example,javascript:alert(1)' }, 'CORS_ORIGINS');
    expectRejected({ BOOTSTRAP_ADMIN_USERNAME: 'root' }, 'BOOTSTRAP_ADMIN_PASSWORD');
  });

  it('When the JWT secret is short, empty or a known default, then start-up is refused', () => {
    expectRejected({ JWT_SECRET: 'x'.repeat(31) }, 'JWT_SECRET');
    expectRejected({ JWT_SECRET: '' }, 'JWT_SECRET');
    expectRejected({ JWT_SECRET: 'change-me-please-change-me-please-32' }, 'JWT_SECRET');
  });

  it('When running in production, then the secrets are required', () => {
    expectRejected({ NODE_ENV: 'production', JWT_SECRET: 'y'.repeat(40) }, 'SESSION_SECRET');
    expectRejected({ NODE_ENV: 'production', SESSION_SECRET: 'z'.repeat(40) }, 'JWT_SECRET');
    const config = loadConfig({
      NODE_ENV: 'production',
      SESSION_SECRET: 'z'.repeat(40),
      JWT_SECRET: 'y'.repeat(40),
    });
    expect(config.seedDemoData).to.equal(false);
  });

  it('When lists are given, then they are split, trimmed and normalised', () => {
    const config = loadConfig({
      CORS_ORIGINS: 'https://a.example/, https://b.example:8443',
      ADMIN_EMAILS: 'Boss@Example.com, ops@example.com',
    });
    expect(config.corsOrigins).to.deep.equal(['https://a.example', 'https://b.example:8443']);
    expect(config.adminEmails).to.deep.equal(['boss@example.com', 'ops@example.com']);
  });

  it('When replicas and Sentinels are given, then they are parsed; bad entries name their variable', () => {
    const none = loadConfig({});
    expect(none.databaseReplicaUrls).to.deep.equal([]);
    expect(none.replicaMaxLagMs).to.equal(1000);
    expect(none.redisSentinel).to.equal(undefined);
    const config = loadConfig({
      DATABASE_REPLICA_URL: 'postgres://r1.example/db, postgres://r2.example/db?sslmode=require',
      REPLICA_MAX_LAG_MS: '250',
      REDIS_SENTINELS: 's1.example:26379, 10.0.0.2:26380,[::1]:26381',
      REDIS_SENTINEL_PASSWORD: 'sentinel-secret',
    });
    expect(config.databaseReplicaUrls).to.deep.equal([
      'postgres://r1.example/db',
      'postgres://r2.example/db?sslmode=require',
    ]);
    expect(config.replicaMaxLagMs).to.equal(250);
    expect(config.redisSentinel).to.deep.equal({
      sentinels: [
        { host: 's1.example', port: 26379 },
        { host: '10.0.0.2', port: 26380 },
        { host: '::1', port: 26381 },
      ],
      name: 'stockroom',
      password: 'sentinel-secret',
    });
    expectRejected({ DATABASE_REPLICA_URL: 'postgres://ok.example/db,mysql://x/y' }, 'DATABASE_REPLICA_URL');
    expectRejected(
      { DATABASE_REPLICA_URL: 'postgres://r.example/db?sslmode=prefer' },
      'DATABASE_REPLICA_URL',
    );
    expectRejected({ REPLICA_MAX_LAG_MS: '0' }, 'REPLICA_MAX_LAG_MS');
    expectRejected({ REDIS_SENTINELS: 's1.example' }, 'REDIS_SENTINELS');
    expectRejected({ REDIS_SENTINELS: 's1.example:99999' }, 'REDIS_SENTINELS');
    expectRejected({ REDIS_SENTINEL_NAME: 'bad name' }, 'REDIS_SENTINEL_NAME');
    // A hash-tagged prefix (Redis Cluster) is accepted; braces elsewhere are not.
    expect(loadConfig({ REDIS_PREFIX: '{stockroom}' }).redisPrefix).to.equal('{stockroom}');
    expectRejected({ REDIS_PREFIX: 'stock{room}' }, 'REDIS_PREFIX');
  });
});
