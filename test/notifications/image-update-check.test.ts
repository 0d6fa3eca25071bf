/**
 * API.md §4.11/§4.21: the background image update check (`containers.updates_check_interval_s`) tells
 * a new registry digest without any GET /api/container/updates, once, and a restart on the same data
 * dir does not tell it again (data/container/image-update-notices.yaml). A private dockerd, a private
 * registry and a real webhook receiver.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { AppHost } from '../../core/app-host.ts';
import { buildApp } from '../../core/app.ts';
import { builtinGroups } from '../../plugins/index.ts';
import { build, tempDir, testConfig } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';
import { createService, engineAndRegistryTests, STACK } from '../containers/update-support.ts';
import { buildAndPush, publishNewer } from '../containers/registry.ts';
import type { Engine } from '../containers/support.ts';
import { addChannel, captureLog, quietUpstream, startReceiver } from './support.ts';

const { updateTest } = engineAndRegistryTests('notifications image-update-check test');

/** An app checking every second, the registry asked on every check (ttl 0); its debug lines in `lines`. */
async function checkingApp(t: Parameters<typeof build>[0], engine: Engine, dataDir: string) {
  const { lines, logStream } = captureLog();
  const app = await build(t, {
    dataDir,
    logStream,
    config: {
      auth: { mode: 'off' },
      log: { level: 'debug' },
      docker: { host: '', socket: engine.socket },
      stack: { containers: STACK, project: '' },
      containers: { stop_timeout_s: 5, updates_ttl_s: 0, update_stable_s: 1, updates_check_interval_s: 1 },
      notifications: { tick_ms: 20, ...quietUpstream },
    },
  });
  const checks = () => lines.filter((line) => line.includes('image update check done')).length;
  /** Resolves once `n` more background checks have finished. */
  const moreChecks = async (n: number) => {
    const target = checks() + n;
    await waitFor(() => checks() >= target, 1_000 * n + 1_000);
  };
  return { app, lines, moreChecks };
}

const requestsTo = (lines: string[]) => lines.filter((line) => line.includes('/api/container/updates')).length;

updateTest('a new digest is told once by the background check, and not again after a restart', async (t) => {
  const engine = t.context.engine!;
  const reference = `${t.context.registry!.host}/stack/svc-ok:1`;
  const v1 = await buildAndPush(engine, reference, { content: 'v1' });
  await createService(engine.docker, { name: 'svc-ok', image: reference });
  const dataDir = path.join(await tempDir(t), 'data');
  const receiver = await startReceiver(t);
  const bodies = () => receiver.received.map((request) => JSON.parse(request.body) as Record<string, string>);

  const first = await checkingApp(t, engine, dataDir);
  await addChannel(first.app, {
    name: 'ops',
    type: 'webhook',
    config: { url: receiver.url },
    categories: ['containers'],
    min_severity: 'info',
  });
  // up to date: checks run, nothing is told
  await first.moreChecks(1);
  t.is(receiver.received.length, 0);

  const v2 = await publishNewer(engine, reference, v1.id, { content: 'v2' });
  await waitFor(() => receiver.received.length >= 1, 3_000);
  // more checks of the same digest: no second message
  await first.moreChecks(2);
  t.is(receiver.received.length, 1);
  t.is(requestsTo(first.lines), 0, 'no GET /api/container/updates was made');
  const saved = parse(await readFile(path.join(dataDir, 'container', 'image-update-notices.yaml'), 'utf8'));
  t.deepEqual(
    saved.notices.map((n: Record<string, unknown>) => [n.service, n.latest_digest]),
    [['svc-ok', v2.digest]],
  );
  await first.app.close();

  // the next process checks the same digest: already told
  const second = await checkingApp(t, engine, dataDir);
  await second.moreChecks(2);
  t.is(receiver.received.length, 1);

  // it still tells what is new
  const v3 = await publishNewer(engine, reference, v1.id, { content: 'v3' });
  await waitFor(() => receiver.received.length >= 2, 3_000);
  await second.moreChecks(1);
  t.deepEqual(
    bodies().map((body) => `${body.category} ${body.severity} ${body.title}`),
    ['containers info Image update available: svc-ok', 'containers info Image update available: svc-ok'],
  );
  t.true(bodies()[0].message.includes(v2.digest), bodies()[0].message);
  t.true(bodies()[1].message.includes(v3.digest), bodies()[1].message);
  t.is(requestsTo(second.lines), 0);
});

updateTest('an upgrade keeps the legacy .cache record, and a hot reload tells nothing again', async (t) => {
  const engine = t.context.engine!;
  const reference = `${t.context.registry!.host}/stack/svc-bk:1`;
  const v1 = await buildAndPush(engine, reference, { content: 'bk v1' });
  await createService(engine.docker, { name: 'svc-bk', image: reference });
  const v2 = await publishNewer(engine, reference, v1.id, { content: 'bk v2' });
  const dataDir = path.join(await tempDir(t), 'data');
  // what a version before the data file recorded: v2 was told
  await mkdir(path.join(dataDir, '.cache'), { recursive: true });
  await writeFile(
    path.join(dataDir, '.cache', 'image-update-notices.json'),
    JSON.stringify({ format: 1, notices: [{ service: 'svc-bk', latest_digest: v2.digest }] }),
  );
  const config = testConfig(dataDir, {
    auth: { mode: 'off' },
    docker: { host: '', socket: engine.socket },
    stack: { containers: STACK, project: '' },
    containers: { stop_timeout_s: 5, updates_ttl_s: 0, update_stable_s: 1, updates_check_interval_s: 0 },
    notifications: quietUpstream,
  });
  const host = new AppHost(
    (generation, serverFactory) =>
      buildApp({ config, groups: builtinGroups, generation, serverFactory, logger: false }),
    pino({ level: 'silent' }),
  );
  t.teardown(() => host.close());
  const told: string[] = [];
  const listen = (app: FastifyInstance) =>
    app.events.listen((type, data) => {
      // svc-ok of the test before is on the same engine, with an update this data dir never told
      const update = data as { service: string; latest_digest: string };
      if (type === 'image_update' && update.service === 'svc-bk') told.push(update.latest_digest);
    });
  const check = async () => {
    const reply = await host.app!.inject({ url: '/api/container/updates' });
    t.is(reply.statusCode, 200, reply.body);
    return (reply.json() as Array<Record<string, unknown>>).find((u) => u.service === 'svc-bk')!;
  };

  listen(await host.start());
  t.like(await check(), { update_available: true, latest_digest: v2.digest });
  t.deepEqual(told, [], 'the upgrade told again what the legacy record holds');

  t.true(await host.reload());
  t.is(host.generation, 2);
  listen(host.app!);
  await check();
  t.deepEqual(told, [], 'the reloaded instance told it again');

  const v3 = await publishNewer(engine, reference, v1.id, { content: 'bk v3' });
  await check();
  await check();
  t.deepEqual(told, [v3.digest]);
  t.true(await host.reload());
  listen(host.app!);
  await check();
  t.deepEqual(told, [v3.digest]);
});
