/**
 * Startup cost at scale: N Pangolin routers, N middlewares and N resource files, then one app boot
 * (file scans, first discovery sync, first generation). Prints the phases' times.
 *   npx tsx bench/boot.ts [--resources 5000]
 */
import { buildApp } from '../core/app.ts';
import { builtinGroups } from '../plugins/index.ts';
import { createStack } from './stack.ts';

const i = process.argv.indexOf('--resources');
const N = i > 0 ? Number(process.argv[i + 1]) : 5000;
const stack = await createStack(N);
try {
  const { config } = stack;
  const t0 = performance.now();
  const app = await buildApp({ config, groups: builtinGroups, logger: false });
  await app.ready();
  const t1 = performance.now();
  const report = await app.resources.started();
  const t2 = performance.now();
  await app.proxyConfig.regenerate();
  const t3 = performance.now();
  process.stdout.write(
    `${N} resources: build+ready ${(t1 - t0).toFixed(0)} ms, first sync ${(t2 - t1).toFixed(0)} ms (written ${JSON.stringify(report).slice(0, 120)}), generation ${(t3 - t2).toFixed(0)} ms\n`,
  );
  await app.close();
} finally {
  await stack.close();
}
