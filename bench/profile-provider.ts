import { createStack } from './stack.ts';
import { freePort } from './lib/server.ts';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { wrk, waitFor } from './lib/measure.ts';
const stack = await createStack(1000);
const port = await freePort();
const cfg = path.join(path.dirname(stack.dataDir), 'c.yaml');
writeFileSync(
  cfg,
  stringify({
    server: { host: '127.0.0.1', port },
    log: { level: 'warn' },
    storage: { data_dir: stack.dataDir },
    auth: { mode: 'off' },
    templates: { seed: false },
    datasources: { pangolin_url: stack.pangolinUrl, traefik_url: 'http://127.0.0.1:9', active: 'pangolin' },
  }),
);
const child = spawn(
  'taskset',
  [
    '-c',
    '0',
    process.execPath,
    '--cpu-prof',
    '--cpu-prof-dir',
    '/tmp/perfprof/out',
    '--import',
    'tsx',
    path.join(import.meta.dirname, '..', 'plugins', 'main.ts'),
  ],
  { env: { ...process.env, CONFIG_FILE: cfg }, cwd: path.join(import.meta.dirname, '..'), stdio: 'inherit' },
);
const url = `http://127.0.0.1:${port}/api/v1/proxy-config`;
await waitFor(async () => ((await fetch(url)).status === 200 ? true : undefined), 120000, 'up');
// the first sync writes the resource files after the config is served: profile once it is done
const status = `http://127.0.0.1:${port}/api/proxy-config/status`;
await waitFor(
  async () => ((await (await fetch(status)).json()).upstream?.last_ok_at ? true : undefined),
  120000,
  'the first sync',
);
console.log(await wrk(url, child.pid!, { duration: 8, headers: ['Accept-Encoding: gzip'] }));
child.kill('SIGINT');
await new Promise((r) => child.on('exit', r));
await stack.close();
