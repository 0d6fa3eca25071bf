/**
 * RSS of the production server (`node dist/plugins/main.js`, one process) with a synthetic stack:
 * N resources and N middlewares in the data dir, a fake Pangolin serving N routers. Prints the RSS
 * after the startup sync and first generation, and again after Traefik-like polls.
 *
 *   npm run build && npx tsx bench/rss.ts --resources 1000
 *   NODE_OPTIONS=--max-semi-space-size=2 npx tsx bench/rss.ts   # V8 flags reach the server
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { PROJECT_ROOT } from '../core/config/load.ts';
import { createStack } from './stack.ts';

const { values } = parseArgs({ options: { resources: { type: 'string', default: '1000' } } });
const n = Number(values.resources);
const main = path.join(PROJECT_ROOT, 'dist', 'plugins', 'main.js');

/** VmRSS and VmHWM (peak) of a process, in MiB. */
function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)![1]);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}

const stack = await createStack(n);
const started = performance.now();
const child = spawn(process.execPath, [main], {
  env: {
    PATH: process.env.PATH,
    CONFIG_FILE: path.join(PROJECT_ROOT, 'test', 'helpers', 'empty.yaml'),
    LOG_LEVEL: 'info',
    DATA_DIR: stack.dataDir,
    BACKUP_DIR: path.join(stack.dataDir, '..', 'backups'),
    PLUGINS_DIR: path.join(stack.dataDir, '..', 'no-plugins'),
    ...(process.env.NODE_OPTIONS ? { NODE_OPTIONS: process.env.NODE_OPTIONS } : {}),
    HOST: '127.0.0.1',
    PORT: '0',
    AUTH_MODE: 'off',
    PANGOLIN_URL: stack.config.datasources.pangolin_url,
    TRAEFIK_API_URL: 'http://127.0.0.1:9',
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let port = 0;
let buffered = '';
child.stdout.on('data', (chunk: Buffer) => {
  buffered += chunk.toString();
  const match = /"port":(\d+),[^\n]*"msg":"Stack Manager listening/.exec(buffered);
  if (match) port = Number(match[1]);
});
while (port === 0) await new Promise((resolve) => setTimeout(resolve, 50));
const base = `http://127.0.0.1:${port}`;
// the startup sync and first generation are done when the provider answers 200
for (;;) {
  const response = await fetch(`${base}/api/v1/proxy-config`);
  await response.arrayBuffer();
  if (response.status === 200) break;
  await new Promise((resolve) => setTimeout(resolve, 100));
}
const ready = memory(child.pid!);
const readyMs = performance.now() - started;
for (let i = 0; i < 200; i++) {
  const response = await fetch(`${base}/api/v1/proxy-config`, {
    headers: { 'accept-encoding': i % 2 ? 'gzip' : 'identity' },
  });
  await response.arrayBuffer();
}
const polled = memory(child.pid!);
child.kill('SIGTERM');
const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
await stack.close();
console.log(
  [
    `resources: ${n}  (node ${process.version}, node dist/plugins/main.js${process.env.NODE_OPTIONS ? `, NODE_OPTIONS=${process.env.NODE_OPTIONS}` : ''})`,
    `ready (startup sync + first generation served): ${(readyMs / 1000).toFixed(1)} s`,
    `RSS when ready: ${ready.rss.toFixed(0)} MiB (peak ${ready.peak.toFixed(0)} MiB)`,
    `RSS after 200 provider polls: ${polled.rss.toFixed(0)} MiB (peak ${polled.peak.toFixed(0)} MiB)`,
    `exit code after SIGTERM: ${code}`,
  ].join('\n'),
);
