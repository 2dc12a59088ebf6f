import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../config/env.js';
import { postgresConnection } from '../../config/postgres-tls.js';
import { redisTls } from '../../config/redis-tls.js';

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

  it('When TLS and proxy settings are absent, then plain connections and loopback proxies, as before', () => {
    const config = loadConfig({});
    expect(config.databaseCa).to.equal(undefined);
    expect(config.redisTls).to.deep.equal({ ca: undefined, rejectUnauthorized: true });
    expect(config.trustProxy).to.deep.equal(['loopback']);
    expect(postgresConnection(config.databaseUrl, undefined).ssl).to.equal(false);
    expect(redisTls(config.redisUrl, config.redisTls)).to.equal(undefined);
  });

  it('When TRUST_PROXY is a hop count or a list, then it is taken; trusting every hop or a non-address is refused', () => {
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).to.equal(1);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, loopback,fd00::/8' }).trustProxy).to.deep.equal([
      '10.0.0.0/8',
      'loopback',
      'fd00::/8',
    ]);
    expectRejected({ TRUST_PROXY: 'true' }, 'TRUST_PROXY');
    expectRejected({ TRUST_PROXY: '10.0.0.0/33' }, 'TRUST_PROXY');
    expectRejected({ TRUST_PROXY: 'router.example' }, 'TRUST_PROXY');
    expectRejected({ TRUST_PROXY: ' , ' }, 'TRUST_PROXY');
  });

  it('When DATABASE_URL has an sslmode libpq has but Stockroom cannot honour, or a TLS file, then loading fails naming it', () => {
    expectRejected({ DATABASE_URL: 'postgres://u@db.example/x?sslmode=allow' }, 'DATABASE_URL');
    expectRejected({ DATABASE_URL: 'postgres://u@db.example/x?sslmode=sometimes' }, 'DATABASE_URL');
    expectRejected(
      { DATABASE_URL: 'postgres://u@db.example/x?sslmode=verify-full&sslrootcert=/ca.pem' },
      'DATABASE_URL',
    );
    expectRejected({ DATABASE_CA_FILE: '/nonexistent/ca.pem' }, 'DATABASE_CA_FILE');
    expectRejected({ REDIS_CA_FILE: '/nonexistent/ca.pem' }, 'REDIS_CA_FILE');
    expectRejected({ REDIS_TLS_REJECT_UNAUTHORIZED: 'maybe' }, 'REDIS_TLS_REJECT_UNAUTHORIZED');
  });

  it("When sslmode is require, verify-ca or verify-full, then TLS is used with libpq's meaning: require never verifies, even with a CA file", () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'stockroom-ca-'));
    try {
      const caFile = path.join(dir, 'ca.pem');
      writeFileSync(caFile, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
      const config = loadConfig({
        DATABASE_URL: 'postgres://u:p@db.example:6543/x?sslmode=require&application_name=a',
        DATABASE_CA_FILE: caFile,
      });
      const require = postgresConnection(config.databaseUrl, config.databaseCa);
      expect(require.ssl).to.deep.equal({ rejectUnauthorized: false });
      // node-postgres would read sslmode from the URL itself (and verify): the URL it gets has none.
      expect(require.connectionString).to.equal('postgres://u:p@db.example:6543/x?application_name=a');
      const verifyCa = postgresConnection('postgres://db.example/x?sslmode=verify-ca', config.databaseCa);
      expect(verifyCa.ssl).to.include({ rejectUnauthorized: true, ca: config.databaseCa });
      const verifyFull = postgresConnection('postgres://10.1.2.3/x?sslmode=verify-full', config.databaseCa);
      expect(verifyFull.ssl).to.include({ rejectUnauthorized: true, ca: config.databaseCa });
      expect(postgresConnection('postgres://db.example/x?sslmode=no-verify', undefined).sslmode).to.equal(
        'require',
      );
      expect(postgresConnection('postgres://db.example/x?sslmode=disable', undefined).ssl).to.equal(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('When REDIS_URL is rediss://, then TLS is verified unless REDIS_TLS_REJECT_UNAUTHORIZED=false opts out', () => {
    const verified = loadConfig({ REDIS_URL: 'rediss://:pw@cache.example:6380' });
    expect(redisTls(verified.redisUrl, verified.redisTls)).to.deep.equal({ rejectUnauthorized: true });
    const optOut = loadConfig({
      REDIS_URL: 'rediss://cache.example:6380',
      REDIS_TLS_REJECT_UNAUTHORIZED: 'false',
    });
    expect(redisTls(optOut.redisUrl, optOut.redisTls)).to.deep.equal({ rejectUnauthorized: false });
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
    expectRejected({ DATABASE_REPLICA_URL: 'postgres://r.example/db?sslmode=allow' }, 'DATABASE_REPLICA_URL');
    expectRejected({ REPLICA_MAX_LAG_MS: '0' }, 'REPLICA_MAX_LAG_MS');
    expectRejected({ REDIS_SENTINELS: 's1.example' }, 'REDIS_SENTINELS');
    expectRejected({ REDIS_SENTINELS: 's1.example:99999' }, 'REDIS_SENTINELS');
    expectRejected({ REDIS_SENTINEL_NAME: 'bad name' }, 'REDIS_SENTINEL_NAME');
    // A hash-tagged prefix (Redis Cluster) is accepted; braces elsewhere are not.
    expect(loadConfig({ REDIS_PREFIX: '{stockroom}' }).redisPrefix).to.equal('{stockroom}');
    expectRejected({ REDIS_PREFIX: 'stock{room}' }, 'REDIS_PREFIX');
  });
});
