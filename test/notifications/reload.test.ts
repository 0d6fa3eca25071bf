/**
 * Hot reload (API.md §6) with queued notifications: the new instance takes over the queue, the old
 * one stops at once, and a message waiting for its retry is sent once, by the new instance.
 */
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import test from 'ava';
import { AppHost } from '../../core/app-host.ts';
import { buildApp } from '../../core/app.ts';
import type { BuiltinGroup } from '../../core/types.ts';
import { builtinGroups } from '../../plugins/index.ts';
import { tempDir, testConfig } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';
import { captureLog, fakeClock, quietUpstream, startReceiver } from './support.ts';

/** A route that holds the old instance open (it drains in-flight requests) until the test lets go. */
function holdingGroup(gate: Promise<void>): BuiltinGroup {
  return {
    name: 'holding',
    plugin: async (app) => {
      app.get('/api/test/hold', { config: { auth: 'public' } }, async () => {
        await gate;
        return { done: true };
      });
    },
  };
}

test('a reload hands the queue over: the retry is sent once, by the new instance', async (t) => {
  const dir = await tempDir(t);
  const dataDir = path.join(dir, 'data');
  const config = testConfig(dataDir, {
    auth: { mode: 'off' },
    log: { level: 'warn' },
    notifications: { ...quietUpstream, tick_ms: 20 },
  });
  const clock = fakeClock('2030-01-01T10:00:00.000Z');
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const { lines, logStream } = captureLog();
  const silent = (await import('pino')).default({ level: 'silent' });
  const host = new AppHost(
    (generation, serverFactory) =>
      buildApp({
        config,
        groups: [...builtinGroups, holdingGroup(gate)],
        generation,
        serverFactory,
        now: clock.now,
        logStream,
      }),
    silent,
  );
  t.teardown(() => host.close());
  const first = await host.start();
  await new Promise<void>((resolve) => host.server.listen(0, '127.0.0.1', () => resolve()));
  const base = `http://127.0.0.1:${(host.server.address() as AddressInfo).port}`;
  const receiver = await startReceiver(t, { status: 503 });
  const created = await fetch(`${base}/api/notifications/channels`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'hook', type: 'webhook', config: { url: receiver.url } }),
  });
  t.is(created.status, 201);
  first.notifications.notify({ category: 'proxy', severity: 'error', title: 'before reload', body: 'x' });
  await waitFor(() => lines.some((line) => line.includes('notification attempt failed')), 100);

  // a request in flight keeps the old instance alive (draining) while the new one serves
  const held = fetch(`${base}/api/test/hold`);
  const reloading = host.reload();
  await waitFor(() => host.generation === 2, 1_000);
  receiver.behaviour.status = 200;
  clock.advance(1_000);
  const second = host.app!;
  second.notifications.notify({ category: 'proxy', severity: 'error', title: 'after reload', body: 'y' });
  await waitFor(() => receiver.received.length >= 3, 500);
  // the old instance, still draining, must not have retried too
  t.deepEqual(receiver.received.map((request) => JSON.parse(request.body).title).sort(), [
    'after reload',
    'before reload',
    'before reload',
  ]);
  release();
  t.is((await held).status, 200);
  t.true(await reloading);
  t.is(receiver.received.length, 3);
  const history = (await second.inject({ url: '/api/notifications/history' })).json() as Array<{
    title: string;
    status: string;
    attempts: number;
  }>;
  t.like(
    history.find((entry) => entry.title === 'before reload'),
    { status: 'sent', attempts: 2 },
  );
  // the file is the new instance's: the old one wrote nothing after it retired
  const state = JSON.parse(await readFile(path.join(dataDir, '.notifications', 'state.json'), 'utf8'));
  await waitFor(async () => {
    const fresh = JSON.parse(await readFile(path.join(dataDir, '.notifications', 'state.json'), 'utf8'));
    return fresh.records.every((record: { status: string }) => record.status === 'sent');
  }, 500);
  t.is(state.version, 1);
});
