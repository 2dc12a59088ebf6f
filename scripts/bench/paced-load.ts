import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { LoadSpec } from './processes.js';

/**
 * A paced load generator, run as its own process like scripts/bench/load.ts (same spec, same output line): it
 * sends request i at start + i / rate over up to `connections` keep-alive connections, whatever the answers
 * take (open loop). autocannon's rate limit is per second instead: every connection sends its quota as fast as
 * it can at the start of each second and then waits, so "half the max rate" there is full speed half of the
 * time. A lag measured "at a rate" wants the rate.
 */
const arg = process.argv[2];
const spec = JSON.parse(arg.startsWith('@') ? readFileSync(arg.slice(1), 'utf8') : arg) as LoadSpec;
if (!spec.rate) throw new Error('a paced load needs a rate');
const rate = spec.rate;
const url = new URL(spec.url);
const agent = new http.Agent({ keepAlive: true, maxSockets: spec.connections });
const total = Math.floor(spec.seconds * rate);
const latencies: number[] = [];
let sent = 0;
let non2xx = 0;
let errors = 0;
let inFlight = 0;

const fire = (onDone: () => void) => {
  const path = spec.paths ? spec.paths[Math.floor(Math.random() * spec.paths.length)] : url.pathname;
  const began = performance.now();
  inFlight += 1;
  const finish = () => {
    inFlight -= 1;
    latencies.push(performance.now() - began);
    onDone();
  };
  const req = http.request(
    { agent, host: url.hostname, port: url.port, method: spec.method ?? 'GET', path, headers: spec.headers },
    res => {
      if (res.statusCode === undefined || res.statusCode < 200 || res.statusCode > 299) non2xx += 1;
      res.resume();
      res.on('end', finish);
    },
  );
  req.on('error', () => {
    errors += 1;
    finish();
  });
  req.end();
};

const start = performance.now();
await new Promise<void>(resolve => {
  const settle = () => {
    if (sent === total && inFlight === 0) resolve();
  };
  const tick = () => {
    const due = Math.min(total, Math.floor(((performance.now() - start) * rate) / 1000) + 1);
    while (sent < due) {
      sent += 1;
      fire(settle);
    }
    if (sent < total) setTimeout(tick, 1);
  };
  tick();
});
const seconds = (performance.now() - start) / 1000;
latencies.sort((a, b) => a - b);
const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
agent.destroy();
console.log(
  JSON.stringify({
    rate: sent / seconds,
    total: sent,
    p50: at(0.5),
    p99: at(0.99),
    non2xx,
    errors,
  }),
);
