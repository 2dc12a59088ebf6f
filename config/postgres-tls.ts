import { connect, isIP } from 'node:net';
import { checkServerIdentity, type ConnectionOptions } from 'node:tls';
import { ConfigError } from './config-error.js';
import type { PostgresConnection, SslMode } from '../domain/shared/postgres-connection.js';

export type { PostgresConnection, SslMode };

const MODES: Record<string, SslMode> = {
  disable: 'disable',
  prefer: 'prefer',
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

/**
 * The node-postgres settings for a PostgreSQL URL, its `sslmode` read as libpq reads it: `disable` is plain
 * TCP, and so is a `prefer` (or absent sslmode) that {@link settleSslmode} has not settled; `require` encrypts and never verifies the certificate, even
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
  const given = params.get('sslmode') ?? 'prefer';
  const sslmode = MODES[given];
  if (!sslmode)
    throw new ConfigError(
      variable,
      `has sslmode=${given}; use disable, prefer, require, verify-ca or verify-full (allow is not supported)`,
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
    case 'prefer':
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

/** PostgreSQL's SSLRequest message: the server answers one byte, `S` (TLS next) or `N`, before any login. */
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 4, 210, 22, 47]);

/**
 * libpq's `prefer`, which is also what a URL without sslmode means (a platform add-on's DATABASE_URL has none,
 * and its server may take TLS only): the URL with `sslmode=require` when the server offers TLS, else with
 * `sslmode=disable`. node-postgres cannot fall back from TLS to plain on one connection, so the server is asked
 * once (an SSLRequest, no login) before the pools are made; a server that cannot be reached is taken as plain.
 * A URL with another sslmode, or a Unix socket, is returned unchanged.
 */
export async function settleSslmode(url: string, timeoutMs = 3000): Promise<string> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  const sslmode = parsed.searchParams.get('sslmode');
  if ((sslmode !== null && sslmode !== 'prefer') || parsed.searchParams.has('host')) return url;
  const host = decodeURIComponent(parsed.hostname).replace(/^\[(.*)\]$/, '$1') || 'localhost';
  const offered = await offersTls(host, Number(parsed.port || 5432), timeoutMs);
  parsed.searchParams.set('sslmode', offered ? 'require' : 'disable');
  return parsed.toString();
}

function offersTls(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise(resolve => {
    const socket = connect({ host, port });
    const done = (offered: boolean) => {
      socket.destroy();
      resolve(offered);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => socket.write(SSL_REQUEST));
    socket.once('data', (data: Buffer) => done(data[0] === 0x53));
    socket.once('error', () => done(false));
    socket.once('close', () => done(false));
  });
}
