import net from 'node:net';
import type { Services } from '../../config/services.js';

/** A client that asked for a streamed answer, read its first chunk, and then stopped reading. */
export interface StalledReader {
  /** HTTP status of the answer. */
  status: number;
  /** The head (status line and headers) and whatever body came with the first chunk. */
  firstChunk: string;
  /** Starts reading again and resolves when the server has ended the connection: the bytes read and how. */
  drain(): Promise<{ bytes: number; reset: boolean; complete: boolean }>;
  /** Closes the client side. */
  close(): void;
}

/**
 * Opens `path` on a raw socket and stops reading after the first chunk. Node cannot shrink SO_RCVBUF, so on
 * loopback the kernel still buffers a few MB of the answer before the server feels backpressure: the answer
 * must be larger than that (the suites using this build multi-megabyte answers in SQL).
 */
export async function openStalledReader(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<StalledReader> {
  const socket = net.connect({ port, host: '127.0.0.1' });
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${lines.join('')}\r\n`);
  let ended = false;
  let reset = false;
  const closed = new Promise<void>(resolve => {
    socket.on('error', error => {
      if ((error as NodeJS.ErrnoException).code === 'ECONNRESET') reset = true;
    });
    socket.once('close', () => {
      ended = true;
      resolve();
    });
  });
  const first = await new Promise<Buffer>((resolve, reject) => {
    socket.once('data', chunk => {
      socket.pause();
      resolve(chunk);
    });
    socket.once('error', reject);
  });
  const firstChunk = first.toString('latin1');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(firstChunk)?.[1] ?? 0);
  let bytes = first.length;
  let tail = firstChunk.slice(-16);
  return {
    status,
    firstChunk,
    drain: async () => {
      socket.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        tail = (tail + chunk.toString('latin1')).slice(-16);
      });
      socket.resume();
      await closed;
      // A chunked answer that was sent whole ends with the zero-length chunk.
      return { bytes, reset, complete: ended && tail.endsWith('0\r\n\r\n') };
    },
    close: () => socket.destroy(),
  };
}

/**
 * `rows` items and as many history entries with long names: unpaged lists and exports of 7-12 MB, more than
 * loopback's kernel buffers hold for a reader that stopped. Items are named `Stalled item <n> x…`.
 */
export async function seedLargeAnswers(services: Services, rows: number): Promise<void> {
  await services.orm.em.fork().execute(
    `with s as (insert into supplier (name, created_by) values ('Stall supplier', 'seed') returning id)
     insert into inventory_item (name, sku, quantity, price, supplier_id, created_by)
     select 'Stalled item ' || n || ' ' || repeat('x', 220), 'STALL-' || n, n, 1.25, s.id, 'seed'
       from generate_series(1, ?) n, s;
     insert into stock_history (outbox_event_id, item_id, item_name, supplier_id, supplier_name, change,
                                quantity_before, quantity_after, reason, price_at_change, created_by, "timestamp")
     select n, gen_random_uuid(), 'Stalled item ' || n || ' ' || repeat('y', 220), null, null, 1, n - 1, n,
            'RESTOCK', 1.25, 'seed@example.test', timestamptz '2026-01-01' + n * interval '1 second'
       from generate_series(1, ?) n;`,
    [rows, rows],
  );
}
