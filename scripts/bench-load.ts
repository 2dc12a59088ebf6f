import autocannon from 'autocannon';

/**
 * The bench's load generator, run as its own process (never on a server's event loop). Argument: JSON
 * `{ url, paths?, method?, headers?, connections, seconds }`; each request takes a random entry of `paths`
 * when given. Prints one JSON line: requests/s, latency p50/p99 (ms), non-2xx and errors.
 */
interface LoadSpec {
  url: string;
  paths?: string[];
  method?: 'GET' | 'PATCH';
  headers?: Record<string, string>;
  /** Headers made unique per request (e.g. Idempotency-Key): header name -> prefix. */
  uniqueHeaders?: Record<string, string>;
  connections: number;
  seconds: number;
}

const spec = JSON.parse(process.argv[2]) as LoadSpec;
let counter = 0;
const { paths, uniqueHeaders } = spec;
const result = await autocannon({
  url: spec.url,
  connections: spec.connections,
  duration: spec.seconds,
  method: spec.method ?? 'GET',
  headers: spec.headers,
  ...(paths || uniqueHeaders
    ? {
        requests: [
          {
            setupRequest: (req: any) => {
              const next = { ...req };
              if (paths) next.path = paths[Math.floor(Math.random() * paths.length)];
              if (uniqueHeaders) {
                next.headers = { ...req.headers };
                for (const [name, prefix] of Object.entries(uniqueHeaders))
                  next.headers[name] = `${prefix}-${process.pid}-${++counter}`;
              }
              return next;
            },
          },
        ],
      }
    : {}),
});
console.log(
  JSON.stringify({
    rate: result.requests.average,
    total: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  }),
);
