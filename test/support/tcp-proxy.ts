import { connect, createServer, type Socket } from 'node:net';

/** A TCP proxy on 127.0.0.1 in front of a server, which a test can cut (the server is away) and restore. */
export interface TcpProxy {
  port: number;
  /** Ends every open connection and refuses new ones until `restore`. */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function tcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let away = false;
  const server = createServer(client => {
    if (away) return client.destroy();
    const upstream = connect(targetPort, targetHost);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    cut() {
      away = true;
      for (const socket of open) socket.destroy();
    },
    restore() {
      away = false;
    },
    close: () =>
      new Promise<void>(resolve => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** `url` with its host and port replaced by the proxy's. */
export const throughProxy = (url: string, proxy: TcpProxy): string => {
  const parsed = new URL(url);
  parsed.hostname = '127.0.0.1';
  parsed.port = String(proxy.port);
  return parsed.toString();
};
