/** GET /api/jobs and /api/jobs/:id (API.md §4.14): class O auth, filters, paging, errors, OpenAPI, job events. */
import test from 'ava';
import type { FastifyInstance } from 'fastify';
import { build } from '../helpers/build.ts';
import { dataOf, listen, stream } from '../events/support.ts';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

async function withJobs(app: FastifyInstance): Promise<string[]> {
  const ids: string[] = [];
  for (const [kind, fail] of [
    ['container_update', false],
    ['container_update', true],
    ['other_kind', false],
  ] as const) {
    const job = app.jobs.start({ kind, params: {}, steps: [{ service: 'x', step: 'one' }] }, async (ctx) => {
      ctx.step('x', 'one').ok('done');
      if (fail) throw new Error('broken');
    });
    await app.jobs.settled(job.id);
    ids.push(job.id);
  }
  return ids;
}

test('GET /api/jobs: newest first, kind and status filters, paging with X-Total-Count and Link', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const [a, b, c] = await withJobs(app);
  const all = await app.inject({ url: '/api/jobs' });
  t.is(all.statusCode, 200);
  t.deepEqual(
    (all.json() as Array<{ id: string }>).map((j) => j.id),
    [c, b, a],
  );
  t.is(all.headers['x-total-count'], '3');
  t.deepEqual(
    (await app.inject({ url: '/api/jobs?kind=container_update' })).json().map((j: { id: string }) => j.id),
    [b, a],
  );
  t.deepEqual(
    (await app.inject({ url: '/api/jobs?kind=container_update&status=failed' }))
      .json()
      .map((j: { id: string }) => j.id),
    [b],
  );
  t.deepEqual((await app.inject({ url: '/api/jobs?kind=nothing_like_it' })).json(), []);
  const paged = await app.inject({ url: '/api/jobs?status=succeeded&page=1&page_size=1' });
  t.deepEqual(
    paged.json().map((j: { id: string }) => j.id),
    [c],
  );
  t.is(paged.headers['x-total-count'], '2');
  t.is(paged.headers.link, '</api/jobs?status=succeeded&page=2&page_size=1>; rel="next"');
  for (const url of [
    '/api/jobs?status=done',
    '/api/jobs?page=0',
    '/api/jobs?page_size=1001',
    '/api/jobs/job-1',
    '/api/jobs/JOB-01ARZ3NDEKTSV4RRFFQ69G5FAV',
  ]) {
    const reply = await app.inject({ url });
    t.is(reply.statusCode, 422, url);
    t.is(reply.json().id, 'validation_failed', url);
  }
});

test('GET /api/jobs/:id: the job object; an unknown id is 404', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const [, failed] = await withJobs(app);
  const reply = await app.inject({ url: `/api/jobs/${failed}` });
  t.is(reply.statusCode, 200);
  t.like(reply.json(), {
    id: failed,
    kind: 'container_update',
    status: 'failed',
    progress: 1,
    error: 'broken',
    params: {},
  });
  t.deepEqual(Object.keys(reply.json()).sort(), [
    'created_at',
    'error',
    'finished_at',
    'id',
    'kind',
    'params',
    'progress',
    'started_at',
    'status',
    'steps',
  ]);
  const missing = await app.inject({ url: '/api/jobs/job-01arz3ndektsv4rrffq69g5fav' });
  t.is(missing.statusCode, 404);
  t.is(missing.json().id, 'not_found');
});

test('jobs routes are class O: a token is needed in auth mode ops', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'ops' } } });
  t.is((await app.inject({ url: '/api/jobs' })).statusCode, 401);
  t.is((await app.inject({ url: '/api/jobs/job-01arz3ndektsv4rrffq69g5fav' })).statusCode, 401);
  t.is(
    (await app.inject({ method: 'POST', url: '/api/container/update', payload: { services: ['traefik'] } })).statusCode,
    401,
  );
  const token = (await readFile(path.join(app.store.dataDir, 'auth', 'initial-admin-token'), 'utf8')).trim();
  const reply = await app.inject({ url: '/api/jobs', headers: { authorization: `Bearer ${token}` } });
  t.is(reply.statusCode, 200);
  t.deepEqual(reply.json(), []);
});

test('the OpenAPI document lists POST /api/container/update and GET /api/jobs*', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const doc = (await app.inject({ url: '/api/openapi.json' })).json() as {
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  };
  t.truthy(doc.paths['/api/container/update']?.post?.responses['202']);
  t.truthy(doc.paths['/api/container/update'].post.responses['409']);
  t.truthy(doc.paths['/api/jobs']?.get?.responses['200']);
  t.truthy(doc.paths['/api/jobs/{id}']?.get?.responses['200']);
});

test('every job change reaches an event stream as a `job` event', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const client = await stream(t, `${await listen(app)}/api/events?types=job`);
  const [a] = await withJobs(app);
  await client.next(
    (e) => e.event === 'job' && JSON.parse(e.data).id === a && JSON.parse(e.data).status === 'succeeded',
  );
  const mine = dataOf(client, 'job').filter((job: { id: string }) => job.id === a);
  t.deepEqual(
    mine.map((job: { status: string }) => job.status),
    ['queued', 'running', 'running', 'succeeded'],
  );
});
