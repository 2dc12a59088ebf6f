import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * The lowest port the kernel hands out on its own (Linux: `ip_local_port_range`): to a listener on port 0 and
 * as the local port of every outgoing connection. A port below it is never taken by either.
 */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 12000) return low;
  } catch {
    // not Linux: the IANA range's start
  }
  return 49152;
}

const LOWEST = 10000;

/** Whether nothing listens on `port`, on any address (the app listens on all of them). */
function canListen(port: number, host: string): Promise<boolean | 'no-family'> {
  return new Promise(resolve => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) =>
      resolve(error.code === 'EAFNOSUPPORT' || error.code === 'EADDRNOTAVAIL' ? 'no-family' : false),
    );
    server.listen({ port, host, ipv6Only: false }, () => server.close(() => resolve(true)));
  });
}

/**
 * A TCP port that was free a moment ago (for a test-owned server, or a closed port to dial), chosen at random
 * BELOW the kernel's ephemeral range: a test learns the port before its server listens there, and meanwhile
 * the connections it opens (PostgreSQL, Redis, an identity provider on port 0) take ephemeral ports, which
 * then can never be this one (a port from port 0 could, and the server's listen failed with EADDRINUSE).
 */
export async function freePort(): Promise<number> {
  const high = ephemeralLow();
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (high - LOWEST));
    let free = await canListen(port, '::');
    if (free === 'no-family') free = await canListen(port, '0.0.0.0');
    if (free === true) return port;
  }
  throw new Error(`no free port between ${LOWEST} and ${high}`);
}
