import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import type { LoadSpec } from './processes.js';

/**
 * The bench's load generator, run as its own process (never on a server's event loop). Argument: a LoadSpec as
 * JSON, or `@<file>` holding it; each request takes a random entry of `paths` when given, and `rate` caps the
 * requests per second over all connections. Prints one JSON line: requests/s, latency p50/p99 (ms), non-2xx and errors.
 */
const arg = process.argv[2];
const spec = JSON.parse(arg.startsWith('@') ? readFileSync(arg.slice(1), 'utf8') : arg) as LoadSpec;
let counter = 0;
const { paths, uniqueHeaders } = spec;
const result = await autocannon({
  url: spec.url,
  connections: spec.connections,
  duration: spec.seconds,
  method: spec.method ?? 'GET',
  headers: spec.headers,
  ...(spec.rate ? { overallRate: spec.rate } : {}),
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
// The generator's own CPU (it shares the cores with the servers), read once for the whole run.
const cpu = process.cpuUsage();
console.log(
  JSON.stringify({
    rate: result.requests.average,
    total: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    loadCpuUs: Math.round((cpu.user + cpu.system) / Math.max(1, result.requests.total)),
  }),
);
