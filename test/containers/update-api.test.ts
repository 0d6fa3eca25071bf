/**
 * POST /api/container/update as an API: the pre-update backup, one job at a time (409 `busy`),
 * held containers, a job that outlives its HTTP client, and bodies refused with 422 before
 * anything starts. Real registry and private dockerd.
 */
import { connect } from 'node:net';
import { waitFor } from '../helpers/wait.ts';
import { createContainer } from './support.ts';
import { buildAndPush, publishNewer } from './registry.ts';
import { createService, engineAndRegistryTests, finished, stepOf, updateApp, type Job } from './update-support.ts';

const { updateTest } = engineAndRegistryTests('container update API tests');

updateTest(
  'backup: true takes a pre-update backup listed in /api/backup/list; an image already the newest is not recreated',
  async (t) => {
    const engine = t.context.engine!;
    const reference = `${t.context.registry!.host}/stack/svc-bk:1`;
    await buildAndPush(engine, reference, { content: 'v1' });
    const old = await createService(engine.docker, { name: 'svc-bk', image: reference });
    const server = await updateApp(t, engine);

    const reply = await server.inject({
      method: 'POST',
      url: '/api/container/update',
      payload: { services: ['svc-bk'], backup: true },
    });
    t.is(reply.statusCode, 202, reply.body);
    const accepted = reply.json() as Job;
    t.deepEqual(accepted.steps[0], {
      service: null,
      step: 'backup',
      status: 'pending',
      message: '',
      started_at: null,
      finished_at: null,
    });
    const job = await finished(server, accepted.id);
    t.is(job.status, 'succeeded', JSON.stringify(job));
    const backupId = /^backup (\S+) created$/.exec(stepOf(job, null, 'backup')!.message)?.[1];
    t.truthy(backupId, stepOf(job, null, 'backup')!.message);
    t.regex(stepOf(job, 'svc-bk', 'pull')!.message, /already the newest image/);
    t.like(stepOf(job, 'svc-bk', 'rename'), { status: 'skipped' });

    const backups = (await server.inject({ method: 'GET', url: '/api/backup/list' })).json() as Array<{
      id: string;
      kind: string;
      note: string;
    }>;
    t.like(
      backups.find((b) => b.id === backupId),
      { kind: 'pre-update' },
    );
    t.regex(backups.find((b) => b.id === backupId)!.note, new RegExp(`before updating svc-bk \\(${job.id}\\)`));
    t.is((await engine.docker.getContainer('svc-bk').inspect()).Id, old.Id, 'nothing to recreate');
  },
);

updateTest(
  'the job survives its HTTP client going away; meanwhile a second update and start/stop of a held container answer 409 busy',
  async (t) => {
    const engine = t.context.engine!;
    const docker = engine.docker;
    const reference = `${t.context.registry!.host}/stack/svc-slow:1`;
    const v1 = await buildAndPush(engine, reference, { content: 'v1' });
    await createService(docker, { name: 'svc-slow', image: reference });
    await createContainer(docker, { name: 'svc-other' });
    const v2 = await publishNewer(engine, reference, v1.id, { content: 'v2' });
    // running for 3 s counts as healthy: the job stays busy long enough to be asked twice
    const server = await updateApp(t, engine, 3);
    await server.listen({ port: 0, host: '127.0.0.1' });
    const { port } = server.server.address() as { port: number };

    const body = JSON.stringify({ services: ['svc-slow'] });
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.write(
      `POST /api/container/update HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    // the client goes away as soon as the job exists, without reading the answer
    const running = await waitFor(async () => {
      const list = (await server.inject({ method: 'GET', url: '/api/jobs?kind=container_update' })).json() as Job[];
      return list[0];
    }, 60_000);
    socket.destroy();

    const second = await server.inject({
      method: 'POST',
      url: '/api/container/update',
      payload: { services: ['svc-other'] },
    });
    t.is(second.statusCode, 409);
    t.like(second.json(), { id: 'busy' });
    t.true((second.json() as { message: string }).message.includes(running.id), 'names the running job');
    for (const action of ['stop', 'start', 'restart']) {
      const held = await server.inject({
        method: 'POST',
        url: `/api/container/container/${action}`,
        payload: { container_name: 'svc-slow' },
      });
      t.is(held.statusCode, 409, `${action}: ${held.body}`);
      t.like(held.json(), { id: 'busy' });
    }
    const free = await server.inject({
      method: 'POST',
      url: '/api/container/container/restart',
      payload: { container_name: 'svc-other' },
    });
    t.is(free.statusCode, 200, 'containers the job does not hold stay usable');

    const job = await finished(server, running.id);
    t.is(job.status, 'succeeded', JSON.stringify(job));
    t.log(
      `update of one container, job start to succeeded: ${Date.parse(job.finished_at!) - Date.parse(job.started_at!)} ms (update_stable_s 3; ${job.steps.map((s) => `${s.step} ${Date.parse(s.finished_at!) - Date.parse(s.started_at!)} ms`).join(', ')})`,
    );
    t.is((await docker.getContainer('svc-slow').inspect()).Image, v2.id);
    t.regex(stepOf(job, 'svc-slow', 'health')!.message, /^running for \d+\.\d s \(the image has no healthcheck\)$/);
    const list = (await server.inject({ method: 'GET', url: '/api/jobs' })).json() as Job[];
    t.deepEqual(
      list.map((j) => j.id),
      [running.id],
      'the refused update made no job',
    );
    const afterwards = await server.inject({
      method: 'POST',
      url: '/api/container/container/restart',
      payload: { container_name: 'svc-slow' },
    });
    t.is(afterwards.statusCode, 200, 'released when the job ends');
  },
);

updateTest('bad bodies answer 422 naming the field and start nothing', async (t) => {
  const engine = t.context.engine!;
  await createContainer(engine.docker, { name: 'not-in-stack' });
  const server = await updateApp(t, engine);
  const cases: Array<[unknown, string]> = [
    [{ services: ['nope'] }, '/services/0'],
    [{ services: ['svc-other', 'not-in-stack'] }, '/services/1'],
    [{ services: ['svc-down'] }, '/services/0'], // configured stack name without a container
    [{ services: [] }, '/services'],
    [{ services: Array.from({ length: 21 }, (_, i) => `svc-${i}`) }, '/services'],
    [{ services: 'svc-other' }, '/services'],
    [{ services: ['svc-other', 'svc-other'] }, '/services'],
    [{ services: [7] }, '/services/0'],
    [{ services: ['svc-other'], backup: 'true' }, '/backup'],
    [{ services: ['svc-other'], health_timeout_s: '60' }, '/health_timeout_s'],
    [{ services: ['svc-other'], health_timeout_s: 9 }, '/health_timeout_s'],
    [{ services: ['svc-other'], health_timeout_s: 601 }, '/health_timeout_s'],
    [{ services: ['svc-other'], health_timeout_s: 30.5 }, '/health_timeout_s'],
    [{}, '/services'],
  ];
  for (const [payload, path] of cases) {
    const reply = await server.inject({ method: 'POST', url: '/api/container/update', payload: payload as object });
    t.is(reply.statusCode, 422, `${JSON.stringify(payload)}: ${reply.body}`);
    const error = reply.json() as { id: string; details: Array<{ path: string; message: string }> };
    t.is(error.id, 'validation_failed');
    t.true(
      error.details.some((d) => d.path === path),
      `${JSON.stringify(payload)} → ${JSON.stringify(error.details)}`,
    );
  }
  const unknown = (
    await server.inject({
      method: 'POST',
      url: '/api/container/update',
      payload: { services: ['nope', 'svc-other', 'not-in-stack'] },
    })
  ).json() as { details: unknown };
  t.deepEqual(unknown.details, [
    { path: '/services/0', message: 'no container named nope' },
    { path: '/services/2', message: 'container not-in-stack is not part of the stack' },
  ]);
  const jobs = await server.inject({ method: 'GET', url: '/api/jobs' });
  t.deepEqual(jobs.json(), []);
  t.is(jobs.headers['x-total-count'], '0');
});

updateTest('closing the app during the health wait rolls the update back before the close finishes', async (t) => {
  const engine = t.context.engine!;
  const docker = engine.docker;
  const reference = `${t.context.registry!.host}/stack/svc-other:2`;
  const v1 = await buildAndPush(engine, reference, { content: 'close-v1' });
  await docker
    .getContainer('svc-other')
    .remove({ force: true })
    .catch(() => undefined); // made by an earlier test
  const old = await createService(docker, { name: 'svc-other', image: reference });
  await publishNewer(engine, reference, v1.id, { content: 'close-v2' });
  const server = await updateApp(t, engine, 120);
  const reply = await server.inject({
    method: 'POST',
    url: '/api/container/update',
    payload: { services: ['svc-other'], health_timeout_s: 600 },
  });
  t.is(reply.statusCode, 202, reply.body);
  const { id } = reply.json() as Job;
  await waitFor(() => server.jobs.get(id).steps.find((s) => s.step === 'health')?.status === 'running', 120_000);
  await server.close();
  const job = server.jobs.get(id);
  t.is(job.status, 'failed');
  t.regex(
    job.error!,
    /^update of svc-other failed at health: health wait interrupted: the server is shutting down; rolled back/,
  );
  const now = await docker.getContainer('svc-other').inspect();
  t.is(now.Id, old.Id);
  t.true(now.State.Running);
});
