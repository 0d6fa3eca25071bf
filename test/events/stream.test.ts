import { mkdir, writeFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import type { FastifyInstance } from 'fastify';
import { build, type BuildTestOptions } from '../helpers/build.ts';
import { openSse, type SseClient } from './sse-client.ts';

/** A listening app (real socket) and the stream URL. */
async function listening(
  t: Parameters<typeof build>[0],
  options: BuildTestOptions = {},
): Promise<{ app: FastifyInstance; base: string }> {
  const app = await build(t, { ...options, config: { auth: { mode: 'off' }, ...options.config } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address() as { port: number };
  return { app, base: `http://127.0.0.1:${address.port}` };
}

async function stream(
  t: Parameters<typeof build>[0],
  url: string,
  headers?: Record<string, string>,
): Promise<SseClient> {
  const client = await openSse(url, { headers });
  t.teardown(() => client.close());
  return client;
}

const MIDDLEWARE = 'name: Limit\ntype: rateLimit\nconfig:\n  average: 10\n';

test('GET /api/events answers text/event-stream with the common headers', async (t) => {
  const { base } = await listening(t);
  const client = await stream(t, `${base}/api/events`);
  t.is(client.status, 200);
  t.regex(String(client.headers['content-type']), /^text\/event-stream/);
  t.is(client.headers['cache-control'], 'no-cache');
  t.is(client.headers['api-version'], '1');
  t.truthy(client.headers['x-request-id']);
});

// serial: it runs alone in this worker, so the other tests' app builds do not hold up its event loop
test.serial(
  'a hand edit of a YAML file reaches an open stream as an object event with source file (the delay logged: ~0.3-0.5 s idle)',
  async (t) => {
    const { app, base } = await listening(t);
    const client = await stream(t, `${base}/api/events?types=object`);
    const dir = path.join(app.store.dataDir, 'middlewares');
    await mkdir(dir, { recursive: true });
    // the first middleware file after startup also pays for validators compiled on first use
    // (~0.1-0.9 s here): measured and logged, the bound applies to the edits after it
    let started = performance.now();
    await writeFile(path.join(dir, 'limit.yaml'), MIDDLEWARE);
    const created = await client.next((e) => e.event === 'object', 5000);
    t.log(`first hand edit after startup → SSE event: ${(performance.now() - started).toFixed(0)} ms`);
    const data = JSON.parse(created.data);
    t.like(data, { collection: 'middlewares', id: 'limit', action: 'created', source: 'file' });
    t.regex(data.etag, /^[0-9a-f]{32}$/);
    t.regex(created.id!, /^[0-9]+$/);

    started = performance.now();
    await writeFile(path.join(dir, 'other.yaml'), MIDDLEWARE);
    await client.next((e) => e.event === 'object' && JSON.parse(e.data).id === 'other', 5000);
    const ms = performance.now() - started;
    // a figure, not a budget: a busy CI box may hold the watcher's timers (the wait above bounds it at 5 s)
    t.log(`hand edit → SSE event: ${ms.toFixed(0)} ms`);

    const count = client.events.length;
    await writeFile(path.join(dir, 'limit.yaml'), MIDDLEWARE.replace('10', '20'));
    const updated = JSON.parse(
      (await client.next((e) => e.event === 'object' && JSON.parse(e.data).id === 'limit', 5000, count)).data,
    );
    t.like(updated, { id: 'limit', action: 'updated', source: 'file' });
    t.not(updated.etag, data.etag);

    const before = client.events.length;
    await unlink(path.join(dir, 'limit.yaml'));
    const deleted = JSON.parse(
      (await client.next((e) => e.event === 'object' && JSON.parse(e.data).id === 'limit', 5000, before)).data,
    );
    t.deepEqual(deleted, { collection: 'middlewares', id: 'limit', action: 'deleted', source: 'file', etag: null });
  },
);

test('API writes publish object events with source api, and ids increase', async (t) => {
  const { app, base } = await listening(t);
  const client = await stream(t, `${base}/api/events?types=object`);
  const response = await app.inject({
    method: 'POST',
    url: '/api/middlewares',
    payload: { name: 'Limit', type: 'rateLimit', config: { average: 10 } },
  });
  t.is(response.statusCode, 201);
  const body = response.json();
  const created = await client.next((e) => e.event === 'object' && JSON.parse(e.data).id === body.id);
  t.like(JSON.parse(created.data), {
    collection: 'middlewares',
    action: 'created',
    source: 'api',
    etag: response.headers.etag!.toString().replace(/^W\//, '').replaceAll('"', ''),
  });
  await app.inject({ method: 'DELETE', url: `/api/middlewares/${body.id}` });
  const deleted = await client.next((e) => e.event === 'object' && JSON.parse(e.data).action === 'deleted');
  t.true(Number(deleted.id) > Number(created.id));
});

test('an invalid hand edit is reported as invalid_file with line and without the file excerpt, and cleared when fixed', async (t) => {
  const { app, base } = await listening(t);
  const client = await stream(t, `${base}/api/events?types=invalid_file`);
  const dir = path.join(app.store.dataDir, 'middlewares');
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'broken.yaml'), 'name: Broken\ntype: rateLimit\nconfig:\n  average: [secret-value\n');
  const reported = JSON.parse((await client.next((e) => e.event === 'invalid_file', 10_000)).data);
  t.is(reported.path, 'middlewares/broken.yaml');
  t.is(typeof reported.line, 'number');
  t.regex(reported.message, /invalid YAML/);
  t.false(reported.message.includes('secret-value'), 'no excerpt of the file in the event');
  const count = client.events.length;
  await writeFile(path.join(dir, 'broken.yaml'), MIDDLEWARE);
  const cleared = JSON.parse((await client.next((e) => e.event === 'invalid_file', 10_000, count)).data);
  t.deepEqual(cleared, { path: 'middlewares/broken.yaml', cleared: true });
});

test('types filters the stream; unknown types answer 422', async (t) => {
  const { app, base } = await listening(t);
  const onlyProvider = await stream(t, `${base}/api/events?types=provider`);
  const all = await stream(t, `${base}/api/events`);
  app.events.publish('upstream', { source: 'pangolin', state: 'ok', message: null });
  app.events.publish('provider', { etag: 'abc', generated_at: '2026-01-01T00:00:00.000Z', target: 'default' });
  const provider = await onlyProvider.next((e) => e.event === 'provider');
  await all.next((e) => e.event === 'provider');
  t.deepEqual(
    all.events.map((e) => e.event).filter((e) => e === 'upstream' || e === 'provider'),
    ['upstream', 'provider'],
  );
  t.deepEqual(
    onlyProvider.events.map((e) => e.event),
    ['provider'],
  );
  t.deepEqual(JSON.parse(provider.data), { etag: 'abc', generated_at: '2026-01-01T00:00:00.000Z', target: 'default' });
  const bad = await app.inject({ method: 'GET', url: '/api/events?types=object,nope' });
  t.is(bad.statusCode, 422);
  t.is(bad.json().id, 'validation_failed');
});

test('Last-Event-ID replays the events after it; an id no longer held (or from another run) starts with reset', async (t) => {
  const { app, base } = await listening(t, { config: { auth: { mode: 'off' }, events: { replay_size: 5 } } });
  const first = await stream(t, `${base}/api/events?types=upstream`);
  for (let i = 1; i <= 3; i++) app.events.publish('upstream', { source: 'pangolin', state: 'ok', message: `n${i}` });
  await first.next((e) => JSON.parse(e.data).message === 'n3');
  const [one] = first.events;

  const resumed = await stream(t, `${base}/api/events?types=upstream`, { 'last-event-id': one.id! });
  const replayed = await resumed.next((e) => JSON.parse(e.data).message === 'n3');
  t.deepEqual(
    resumed.events.map((e) => JSON.parse(e.data).message),
    ['n2', 'n3'],
  );
  t.is(replayed.id, first.events[2].id);

  for (let i = 4; i <= 10; i++) app.events.publish('upstream', { source: 'pangolin', state: 'ok', message: `n${i}` });
  await first.next((e) => JSON.parse(e.data).message === 'n10');
  const stale = await stream(t, `${base}/api/events?types=upstream`, { 'last-event-id': one.id! });
  const reset = await stale.next(() => true);
  t.is(reset.event, 'reset');
  t.is(reset.id, first.events.at(-1)!.id, 'reset carries the latest id, so the next reconnect resumes from there');

  // after the ring wrapped, ids still held replay in order
  const eighth = first.events.find((e) => JSON.parse(e.data).message === 'n8')!;
  const wrapped = await stream(t, `${base}/api/events?types=upstream`, { 'last-event-id': eighth.id! });
  await wrapped.next((e) => JSON.parse(e.data).message === 'n10');
  t.deepEqual(
    wrapped.events.map((e) => JSON.parse(e.data).message),
    ['n9', 'n10'],
  );

  const foreign = await stream(t, `${base}/api/events`, { 'last-event-id': '17' });
  t.is((await foreign.next(() => true)).event, 'reset');
});

test('a new stream gets the latest id at once, so a reconnect after a quiet spell misses nothing', async (t) => {
  const { app, base } = await listening(t);
  app.events.publish('upstream', { source: 'pangolin', state: 'ok', message: 'before' });
  const client = await stream(t, `${base}/api/events`);
  const { waitFor } = await import('../helpers/wait.ts');
  const id = await waitFor(() => client.lastEventId, 5000);
  client.close();
  app.events.publish('upstream', { source: 'pangolin', state: 'failed', message: 'while away' });
  const again = await stream(t, `${base}/api/events`, { 'last-event-id': id });
  t.is(JSON.parse((await again.next(() => true)).data).message, 'while away');
});

test('HEAD /api/events answers the stream headers and ends', async (t) => {
  const { app } = await listening(t);
  const head = await app.inject({ method: 'HEAD', url: '/api/events' });
  t.is(head.statusCode, 200);
  t.regex(String(head.headers['content-type']), /^text\/event-stream/);
  t.is(head.body, '');
});

test('a comment line keeps the stream alive at the configured interval', async (t) => {
  const { base } = await listening(t, { config: { auth: { mode: 'off' }, events: { heartbeat_ms: 100 } } });
  const client = await stream(t, `${base}/api/events`);
  const { waitFor } = await import('../helpers/wait.ts');
  await waitFor(() => client.comments.filter((c) => c === 'keep-alive').length >= 2, 10_000);
  t.pass();
});

test('app.close() ends open streams', async (t) => {
  const { app, base } = await listening(t);
  const client = await stream(t, `${base}/api/events`);
  const { waitFor } = await import('../helpers/wait.ts');
  await waitFor(() => client.lastEventId, 5000);
  await app.close();
  await waitFor(() => client.ended, 5000);
  t.true(client.ended);
});
