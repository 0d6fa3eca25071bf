/**
 * --cpu-prof of a first start on GitOps-written files, then of a warm restart (N resources):
 *   npx tsx bench/profile-startup.ts [N] [out-dir] [tsx|dist]
 * `dist` runs the compiled server as `npm start` does (after `npm run build`); default: the sources through tsx.
 * Writes the .cpuprofile files of each start into out-dir/{cold,warm}-N (default /tmp/sm-startup-prof), each process
 * stopped once it serves the full config; open them in Chrome DevTools or summarise with
 * `npx tsx bench/lib/summarise-profile.ts FILE`.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { createStack } from './stack.ts';
import { fullConfig } from './rows/startup.ts';
import { freePort } from './lib/server.ts';
import { SERVER_CORE, waitFor } from './lib/measure.ts';

const n = Number(process.argv[2] ?? 1000);
const outDir = process.argv[3] ?? '/tmp/sm-startup-prof';
const entry = process.argv[4] === 'dist' ? 'dist' : 'tsx';
const stack = await createStack(n);

for (const run of ['cold', 'warm']) {
  const port = await freePort();
  const cfg = path.join(path.dirname(stack.dataDir), 'profile-config.yaml');
  writeFileSync(
    cfg,
    stringify({
      server: { host: '127.0.0.1', port },
      log: { level: 'info' },
      storage: { data_dir: stack.dataDir },
      auth: { mode: 'off' },
      templates: { seed: false },
      datasources: { pangolin_url: stack.pangolinUrl, traefik_url: 'http://127.0.0.1:9', active: 'pangolin' },
      docker: { socket: path.join(path.dirname(stack.dataDir), 'no-docker.sock') },
    }),
  );
  const t0 = performance.now();
  const child = spawn(
    'taskset',
    [
      '-c',
      SERVER_CORE,
      process.execPath,
      '--cpu-prof',
      '--cpu-prof-dir',
      // one file per thread (tsx's loader runs in a worker): the main thread's is the largest
      path.join(outDir, `${run}-${n}`),
      ...(entry === 'dist'
        ? [path.join(import.meta.dirname, '..', 'dist', 'plugins', 'main.js')]
        : ['--import', 'tsx', path.join(import.meta.dirname, '..', 'plugins', 'main.ts')]),
    ],
    {
      env: { ...process.env, CONFIG_FILE: cfg },
      cwd: path.join(import.meta.dirname, '..'),
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  child.stdout!.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean))
      process.stdout.write(`${((performance.now() - t0) / 1000).toFixed(2)} s ${line.slice(0, 300)}\n`);
  });
  const url = `http://127.0.0.1:${port}/api/v1/proxy-config`;
  await waitFor(() => fullConfig(url, n), 600_000, 'the full config');
  process.stdout.write(`${run}: full config after ${((performance.now() - t0) / 1000).toFixed(2)} s\n`);
  child.kill('SIGINT');
  await new Promise((r) => child.on('exit', r));
}
await stack.close();
