/**
 * Server CPU per provider poll, in µs (process.cpuUsage of the serving process over a fixed number of
 * requests; autocannon in a child process). Unlike requests/s, CPU per request barely moves when
 * other work shares the machine, so two versions can be compared on a busy box. Prints JSON:
 * medians of `--rounds` for 304 polls (If-None-Match) and gzip 200s, through Fastify (`app.listen`,
 * every hook runs) and through the fast route (the hot-reload host, as `npm start` serves Traefik).
 *
 *   npx tsx bench/provider-cpu.ts [--resources 1000] [--requests 20000] [--rounds 3] [--logger]
 *
 * `--logger`: the production logger (pino at the stack's level, into a discarding stream) instead of
 * none. Fastify attaches per-response listeners when a logger or any onResponse hook exists, so a
 * run without a logger charges the first onResponse hook with work production does anyway.
 */
import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import pino from 'pino';
import { createStack } from './stack.ts';
import { AppHost } from '../core/app-host.ts';
import { buildApp } from '../core/app.ts';
import { PROJECT_ROOT } from '../core/config/load.ts';
import { builtinGroups } from '../plugins/index.ts';

const run = promisify(execFile);
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const RESOURCES = arg('resources', 1000);
const REQUESTS = arg('requests', 20_000);
const ROUNDS = arg('rounds', 3);
const logging = process.argv.includes('--logger')
  ? { logStream: new Writable({ write: (_chunk, _encoding, done) => done() }) }
  : { logger: false as const };

/** µs of this process's CPU per request while autocannon sends REQUESTS of them. */
async function cpuPerRequest(url: string, headers: string[]): Promise<number> {
  const cli = path.join(PROJECT_ROOT, 'node_modules', 'autocannon', 'autocannon.js');
  const before = process.cpuUsage();
  const args = [cli, '-j', '-c', '4', '-a', String(REQUESTS), ...headers, url];
  const { stdout } = await run(process.execPath, args, { maxBuffer: 1 << 26 });
  const used = process.cpuUsage(before);
  if (JSON.parse(stdout).errors) throw new Error(`autocannon: errors on ${url}`);
  return (used.user + used.system) / REQUESTS;
}

async function measure(base: string, etag: string): Promise<{ poll304: number; gzip: number }> {
  const url = `${base}/api/v1/proxy-config`;
  const notModified = ['-H', `if-none-match=${etag}`];
  await cpuPerRequest(url, notModified); // warm-up
  const poll304: number[] = [];
  const gzip: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    poll304.push(await cpuPerRequest(url, notModified));
    gzip.push(await cpuPerRequest(url, ['-H', 'accept-encoding=gzip']));
  }
  const median = (values: number[]) => Math.round(values.sort((a, b) => a - b)[values.length >> 1] * 10) / 10;
  return { poll304: median(poll304), gzip: median(gzip) };
}

const stack = await createStack(RESOURCES);
try {
  const app = await buildApp({ config: stack.config, groups: builtinGroups, ...logging });
  await app.listen({ host: '127.0.0.1', port: 0 });
  await app.resources.started();
  await app.proxyConfig.regenerate();
  const fastify = await measure(
    `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    app.proxyConfig.current()!.json.etag,
  );
  await app.close();

  const host = new AppHost(
    (generation, serverFactory) =>
      buildApp({ config: stack.config, groups: builtinGroups, generation, serverFactory, ...logging }),
    pino({ level: 'silent' }),
  );
  await new Promise<void>((resolve) => host.server.listen(0, '127.0.0.1', resolve));
  const hosted = await host.start();
  await hosted.resources.started();
  await hosted.proxyConfig.regenerate();
  const fast = await measure(
    `http://127.0.0.1:${(host.server.address() as AddressInfo).port}`,
    hosted.proxyConfig.current()!.json.etag,
  );
  await host.close();
  const logger = logging.logStream ? 'production' : 'none';
  console.log(
    JSON.stringify({ resources: RESOURCES, requests: REQUESTS, logger, cpu_us_per_request: { fastify, fast } }),
  );
} finally {
  await stack.close();
}
