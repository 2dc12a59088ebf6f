import { isIP } from 'node:net';
import { checkServerIdentity, type ConnectionOptions } from 'node:tls';
import { ConfigError } from './config-error.js';

/** The `sslmode` values Stockroom reads (libpq's names; `no-verify` is node-postgres's name for `require`). */
export type SslMode = 'disable' | 'require' | 'verify-ca' | 'verify-full';

const MODES: Record<string, SslMode> = {
  disable: 'disable',
  require: 'require',
  'no-verify': 'require',
  'verify-ca': 'verify-ca',
  'verify-full': 'verify-full',
};

/** libpq's TLS parameters: read here, never left in the URL for node-postgres to read its own way. */
const TLS_PARAMETERS = [
  'sslmode',
  'ssl',
  'sslrootcert',
  'sslcert',
  'sslkey',
  'sslnegotiation',
  'uselibpqcompat',
];

/** How to reach one PostgreSQL server: node-postgres settings (`connectionString` + `ssl`), for any pool or client. */
export interface PostgresConnection {
  /** The URL without its TLS parameters (node-postgres would otherwise override `ssl` with its own reading). */
  readonly connectionString: string;
  readonly ssl: false | ConnectionOptions;
  readonly sslmode: SslMode;
  readonly host: string;
}

/**
 * The node-postgres settings for a PostgreSQL URL, its `sslmode` read as libpq reads it: `disable` (also when
 * absent, as Stockroom always did) is plain TCP; `require` encrypts and never verifies the certificate, even
 * with a CA file (node-postgres alone would verify it fully); `verify-ca` checks the chain against `caPem`
 * (DATABASE_CA_FILE, or the system's CAs) but not the name; `verify-full` checks both, the name against the
 * URL's host even when that host is an IP address. Every PostgreSQL connection of the service (primary and
 * replicas, pools, LISTEN clients, migrations, scripts) is made from this. Throws a {@link ConfigError}
 * naming `variable` for an sslmode it does not know or a TLS file given in the URL.
 */
export function postgresConnection(
  url: string,
  caPem: string | undefined,
  variable = 'DATABASE_URL',
): PostgresConnection {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(variable, 'is not a valid PostgreSQL URL');
  }
  const params = parsed.searchParams;
  const given = params.get('sslmode') ?? 'disable';
  const sslmode = MODES[given];
  if (!sslmode)
    throw new ConfigError(
      variable,
      `has sslmode=${given}; use disable, require, verify-ca or verify-full (prefer and allow are not supported)`,
    );
  for (const file of ['sslrootcert', 'sslcert', 'sslkey'])
    if (params.has(file))
      throw new ConfigError(
        variable,
        `sets ${file}; give the CA in DATABASE_CA_FILE (client certificates are not supported)`,
      );
  for (const name of TLS_PARAMETERS) params.delete(name);
  const host = decodeURIComponent(parsed.hostname).replace(/^\[(.*)\]$/, '$1') || 'localhost';
  return { connectionString: parsed.toString(), ssl: sslOptions(sslmode, host, caPem), sslmode, host };
}

function sslOptions(sslmode: SslMode, host: string, caPem: string | undefined): false | ConnectionOptions {
  switch (sslmode) {
    case 'disable':
      return false;
    case 'require':
      return { rejectUnauthorized: false };
    case 'verify-ca':
      return { rejectUnauthorized: true, ca: caPem, checkServerIdentity: () => undefined };
    case 'verify-full':
      // node-postgres hands the TLS socket no host name for an IP address, so Node would check 'localhost'.
      return {
        rejectUnauthorized: true,
        ca: caPem,
        ...(isIP(host) ? {} : { servername: host }),
        checkServerIdentity: (_name, cert) => checkServerIdentity(host, cert),
      };
  }
}
