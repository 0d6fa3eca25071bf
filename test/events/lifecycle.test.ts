/** Streams across hot reload and shutdown, slow clients, and what reaches the logs. */
import net from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { AppHost, DRAIN_MS } from '../../core/app-host.ts';
import { buildApp } from '../../core/app.ts';
import { builtinGroups } from '../../plugins/index.ts';
import { build, tempDir, testConfig } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';
import { listen, stream } from './support.ts';

async function hostOn(t: Parameters<typeof tempDir>[0]): Promise<{ host: AppHost; base: string }> {
  const dir = await tempDir(t);
  const config = testConfig(path.join(dir, 'data'), { auth: { mode: 'off' } });
  const silent = (await import('pino')).default({ level: 'silent' });
  const host = new AppHost(
    (generation, serverFactory) =>
      buildApp({ config, groups: builtinGroups, generation, serverFactory, logger: false }),
    silent,
  );
  t.teardown(() => host.close());
  await host.start();
  await new Promise<void>((resolve) => host.server.listen(0, '127.0.0.1', () => resolve()));
  return { host, base: `http://127.0.0.1:${(host.server.address() as AddressInfo).port}` };
}

test('a hot reload ends open streams at once (no drain wait); the reconnect with the old Last-Event-ID gets reset from the new instance', async (t) => {
  const { host, base } = await hostOn(t);
  const client = await stream(t, `${base}/api/events`);
  host.app!.events.publish('upstream', { source: 'pangolin', state: 'ok', message: 'old instance' });
  await client.next((e) => e.event === 'upstream');
  // the drain of the old instance starts once the new one serves: the stream must end then, not DRAIN_MS later
  const reloading = host.reload();
  await waitFor(() => host.generation === 2, 60_000, 5);
  const swapped = performance.now();
  await waitFor(() => client.ended, DRAIN_MS * 2, 5);
  const ms = performance.now() - swapped;
  t.true(await reloading);
  t.true(ms < DRAIN_MS / 2, `the stream ended ${ms} ms after the swap`);
  t.log(`stream ended ${ms.toFixed(0)} ms after the new instance took over`);

  const again = await stream(t, `${base}/api/events`, { 'last-event-id': client.lastEventId! });
  const first = await again.next(() => true);
  t.is(first.event, 'reset');
  t.true(Number(first.id) > Number(client.lastEventId), 'ids of the new instance continue above the old ones');
});

test('shutdown ends open streams and does not wait for them', async (t) => {
  const { host, base } = await hostOn(t);
  const client = await stream(t, `${base}/api/events`);
  await waitFor(() => client.lastEventId, 5000);
  const started = performance.now();
  await host.close();
  t.true(performance.now() - started < DRAIN_MS, 'close did not wait out the drain for the stream');
  await waitFor(() => client.ended, 5000);
  t.pass();
});

test('a client that stops reading is disconnected once max_pending_bytes are buffered; others keep getting events', async (t) => {
  const lines: string[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const app = await build(t, {
    config: { auth: { mode: 'off' }, log: { level: 'warn' }, events: { max_pending_bytes: 512 * 1024 } },
    logStream,
  });
  const base = await listen(app);
  const reader = await stream(t, `${base}/api/events?types=upstream`);
  // a raw client that sends its request and never reads a byte
  const { port } = app.server.address() as AddressInfo;
  const stalled = net.connect(port, '127.0.0.1');
  t.teardown(() => stalled.destroy());
  stalled.pause();
  stalled.write('GET /api/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n');
  await waitFor(
    async () => (await app.inject({ method: 'GET', url: '/api/health' })).statusCode === 200 && reader.lastEventId,
    5000,
  );

  const big = 'x'.repeat(64 * 1024);
  let published = 0;
  await waitFor(
    () => {
      // loopback socket buffers take megabytes before Node's own buffer grows: keep publishing until
      // the server gives up; a few events per tick, so the reading client keeps up
      for (let i = 0; i < 2; i++)
        app.events.publish('upstream', { source: 'pangolin', state: 'ok', message: big, n: ++published });
      return lines.some((line) => line.includes('the client does not read fast enough'));
    },
    120_000,
    5,
  );
  t.log(
    `stalled client closed after ${published} events of 64 KiB (${((published * 64) / 1024).toFixed(0)} MiB published)`,
  );
  t.true(published * 64 * 1024 < 200 * 1024 * 1024, 'closed long before memory could grow without bound');
  app.events.publish('upstream', { source: 'pangolin', state: 'ok', message: 'after', n: -1 });
  await reader.next((e) => JSON.parse(e.data).n === -1, 30_000);
  t.false(reader.ended);
  t.is(
    lines.filter((line) => line.includes('the client does not read fast enough')).length,
    1,
    'only the stalled client was closed',
  );
});

test('access_token never reaches the request log', async (t) => {
  const lines: string[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const app = await build(t, { config: { auth: { mode: 'ops' }, log: { level: 'info' } }, logStream });
  const viewer = await app.auth.create('log-viewer', 'viewer');
  if (viewer === 'exists') throw new Error('token exists');
  const base = await listen(app);
  const client = await stream(t, `${base}/api/events?types=object&access_token=${viewer.token}`);
  t.is(client.status, 200);
  // one line per request, written when it completes: closing the app ends the stream
  await app.close();
  await waitFor(() => lines.some((line) => line.includes('/api/events')), 5000);
  t.false(lines.some((line) => line.includes(viewer.token)));
  t.true(lines.some((line) => line.includes('access_token=***')));
});
