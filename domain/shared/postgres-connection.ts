import type { ConnectionOptions } from 'node:tls';

/**
 * The `sslmode` values Stockroom reads (libpq's names; `no-verify` is node-postgres's name for `require`).
 * `prefer` is libpq's default: see settleSslmode (config/postgres-tls.ts).
 */
export type SslMode = 'disable' | 'prefer' | 'require' | 'verify-ca' | 'verify-full';

/** How to reach one PostgreSQL server: node-postgres settings (`connectionString` + `ssl`), for any pool or client. */
export interface PostgresConnection {
  /** The URL without its TLS parameters (node-postgres would otherwise override `ssl` with its own reading). */
  readonly connectionString: string;
  readonly ssl: false | ConnectionOptions;
  readonly sslmode: SslMode;
  readonly host: string;
}
