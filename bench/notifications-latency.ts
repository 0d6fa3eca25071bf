/**
 * Delivery latency of notifications (issue 28): time from an event published on the bus to its
 * webhook request arriving at a receiver on 127.0.0.1, idle and while 20 pollers read the provider
 * endpoint back to back (Traefik instances polling, at worst). Prints figures; not a test.
 *
 *   npx tsx bench/notifications-latency.ts [--events 200]
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../core/app.ts';
import { builtinGroups } from '../plugins/index.ts';
import { testConfig } from '../test/helpers/build.ts';
import { startFakeUpstream } from '../test/helpers/fake-upstream.ts';
import { writeSources } from '../test/resources/support.ts';

const events = Number(process.argv[process.argv.indexOf('--events') + 1] || 200) || 200;
const POLLERS = 20;
const root = await mkdtemp(path.join(tmpdir(), 'sm-bench-notify-'));
const fake = await startFakeUpstream();
const dataDir = path.join(root, 'data');
await writeSources(dataDir, fake, { pollIntervalS: 3600 });
const app = await buildApp({
  config: testConfig(dataDir, {
    auth: { mode: 'off' },
    datasources: { pangolin_url: fake.pangolinUrl, traefik_url: fake.url, active: 'pangolin' },
  }),
  groups: builtinGroups,
  logger: false,
});
await app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
await app.resources.syncNow();

// the receiver: arrival time per notification title
const arrived = new Map<string, number>();
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    arrived.set(JSON.parse(Buffer.concat(chunks).toString('utf8')).title, performance.now());
    res.end('ok');
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
const created = await app.inject({
  method: 'POST',
  url: '/api/notifications/channels',
  // the cap is not what is measured here
  payload: { name: 'bench', type: 'webhook', config: { url: hook }, min_severity: 'info', max_per_minute: 10_000 },
});
if (created.statusCode !== 201) throw new Error(created.body);

async function measure(label: string): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < events; i++) {
    const name = `${label}-${i}`;
    const started = performance.now();
    app.events.publish('container', { name, state: 'exited' });
    const title = `Container ${name} is exited`;
    while (!arrived.has(title)) await new Promise((resolve) => setTimeout(resolve, 1));
    latencies.push(arrived.get(title)! - started);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return latencies;
}

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))];
const line = (label: string, values: number[]) =>
  `${label}: p50 ${quantile(values, 0.5).toFixed(1)} ms, p99 ${quantile(values, 0.99).toFixed(1)} ms, max ${Math.max(...values).toFixed(1)} ms (n=${values.length})`;

console.log(line('event → receiver, idle', await measure('idle')));

let polling = true;
let polls = 0;
const pollers = Array.from({ length: POLLERS }, async () => {
  while (polling) {
    const response = await fetch(`${base}/api/v1/proxy-config`);
    await response.arrayBuffer();
    polls++;
  }
});
const loadStarted = performance.now();
const loaded = await measure('loaded');
polling = false;
await Promise.all(pollers);
const seconds = (performance.now() - loadStarted) / 1000;
console.log(line(`event → receiver, ${POLLERS} pollers back to back`, loaded));
console.log(`provider reads during the loaded run: ${polls} (${Math.round(polls / seconds)}/s)`);

await app.close();
await fake.close();
receiver.close();
await rm(root, { recursive: true, force: true });
