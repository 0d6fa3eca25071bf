/**
 * POST /api/static/apply against a private dockerd (API.md §4.20): Gerbil recreated with the port
 * the compose file gained (docker inspect shows it) and Traefik with it (its network namespace),
 * the wait for Traefik's entry points, a rollback when the new Gerbil fails its healthcheck, and a
 * lone Traefik restarted while a second apply, an update and start/stop of it answer 409 `busy`.
 */
import { unlink } from 'node:fs/promises';
import path from 'node:path';
import { waitFor } from '../helpers/wait.ts';
import { containerNames, finished, stepOf, type Job } from '../containers/update-support.ts';
import { applyHarness, bindingsOf, createPair, engineTests, OLD_PORTS } from './apply-support.ts';

const { engineTest } = engineTests('static apply tests');

const NEW_PORTS = [...OLD_PORTS, '2222:2222'];

engineTest(
  "apply recreates gerbil with the compose file's new port (and traefik in its namespace), then waits until Traefik lists tcp-2222",
  async (t) => {
    const { docker } = t.context.engine!;
    const h = await applyHarness(t, t.context.engine!, NEW_PORTS);
    const old = await createPair(docker, h, OLD_PORTS);
    t.deepEqual(old.gerbil.HostConfig.PortBindings, bindingsOf(OLD_PORTS));

    const reply = await h.app.inject({ method: 'POST', url: '/api/static/apply', payload: {} });
    t.is(reply.statusCode, 202, reply.body);
    const accepted = reply.json() as Job;
    t.is(reply.headers.location, `/api/jobs/${accepted.id}`);
    t.like(accepted, {
      kind: 'static_apply',
      status: 'queued',
      params: { services: ['traefik', 'gerbil'], health_timeout_s: 120, compose_file: h.composeFile },
    });
    t.deepEqual(
      accepted.steps.map((s) => `${s.service}:${s.step}`),
      [
        'gerbil:rename',
        'gerbil:create',
        'gerbil:start',
        'gerbil:health',
        'traefik:rename',
        'traefik:create',
        'traefik:start',
        'traefik:health',
        'gerbil:cleanup',
        'traefik:cleanup',
        'traefik:entrypoints',
      ],
      "traefik lives in gerbil's namespace: recreated with it, not restarted on its own",
    );

    // the fake Traefik lists web and websecure only: the job waits, and says for what
    const waiting = await waitFor(async () => {
      const job = (await h.app.inject({ url: `/api/jobs/${accepted.id}` })).json() as Job;
      const step = stepOf(job, 'traefik', 'entrypoints')!;
      return step.status === 'running' && /missing tcp-2222/.test(step.message) ? job : null;
    }, 120_000);
    t.is(waiting.status, 'running');
    t.true(
      waiting.steps.filter((s) => s.step !== 'entrypoints').every((s) => s.status === 'ok'),
      JSON.stringify(waiting.steps),
    );
    h.traefik.lists.entrypoints.push({ name: 'tcp-2222', address: ':2222/tcp' });

    const job = await finished(h.app, accepted.id);
    t.is(job.status, 'succeeded', JSON.stringify(job, null, 1));
    t.regex(stepOf(job, 'gerbil', 'create')!.message, /published ports .*2222 → 2222\/tcp/);
    t.regex(stepOf(job, 'gerbil', 'health')!.message, /^healthy after/);
    t.regex(stepOf(job, 'traefik', 'entrypoints')!.message, /lists all 3 entry points/);
    t.log(
      `apply (gerbil + traefik recreated, entry point wait), job start to succeeded: ${Date.parse(job.finished_at!) - Date.parse(job.started_at!)} ms`,
    );

    const gerbil = await docker.getContainer('gerbil').inspect();
    t.not(gerbil.Id, old.gerbil.Id, 'a new gerbil');
    t.true(gerbil.State.Running);
    t.deepEqual(gerbil.HostConfig.PortBindings, bindingsOf(NEW_PORTS), 'docker inspect shows the new port');
    t.truthy((gerbil.Config.ExposedPorts as Record<string, unknown>)['2222/tcp']);
    t.is(gerbil.Config.Labels['com.example.role'], 'gateway', 'the rest of the config is kept');
    t.deepEqual(gerbil.HostConfig.Binds, old.gerbil.HostConfig.Binds);
    const traefik = await docker.getContainer('traefik').inspect();
    t.not(traefik.Id, old.traefik.Id);
    t.true(traefik.State.Running);
    t.is(traefik.HostConfig.NetworkMode, `container:${gerbil.Id}`, 'traefik joins the new gerbil');
    t.deepEqual(
      (await containerNames(docker)).filter((n) => n.includes('-old-')),
      [],
      'old containers removed',
    );

    // the compose file publishes exactly what gerbil has now: a second apply recreates nothing
    const again = await h.app.inject({ method: 'POST', url: '/api/static/apply', payload: { services: ['gerbil'] } });
    t.is(again.statusCode, 202, again.body);
    const second = await finished(h.app, (again.json() as Job).id);
    t.is(second.status, 'succeeded', JSON.stringify(second));
    t.regex(stepOf(second, 'gerbil', 'rename')!.message, /already publishes the ports of the compose file/);
    t.is((await docker.getContainer('gerbil').inspect()).Id, gerbil.Id);
  },
);

engineTest(
  'a new gerbil that fails its healthcheck is rolled back: the old gerbil and traefik run again with the old ports, the job fails',
  async (t) => {
    const { docker } = t.context.engine!;
    const h = await applyHarness(t, t.context.engine!, NEW_PORTS);
    const old = await createPair(docker, h, OLD_PORTS);
    await waitFor(
      async () => (await docker.getContainer('gerbil').inspect()).State.Health?.Status === 'healthy',
      60_000,
    );
    // from now on gerbil's healthcheck fails: the new container turns unhealthy
    await unlink(path.join(h.flagDir, 'ok'));

    const reply = await h.app.inject({ method: 'POST', url: '/api/static/apply', payload: { services: ['gerbil'] } });
    t.is(reply.statusCode, 202, reply.body);
    const job = await finished(h.app, (reply.json() as Job).id);
    t.is(job.status, 'failed', JSON.stringify(job, null, 1));
    t.like(stepOf(job, 'gerbil', 'health'), { status: 'failed' });
    t.regex(stepOf(job, 'gerbil', 'health')!.message, /unhealthy/);
    t.like(stepOf(job, 'gerbil', 'rollback'), { status: 'ok' });
    t.regex(job.error!, /^recreation of gerbil failed at health: .*rolled back: gerbil is its old container/);
    t.like(stepOf(job, 'traefik', 'rename'), { status: 'skipped' });
    t.like(stepOf(job, 'traefik', 'entrypoints'), { status: 'skipped' });

    const gerbil = await docker.getContainer('gerbil').inspect();
    t.is(gerbil.Id, old.gerbil.Id, 'the old gerbil is back');
    t.true(gerbil.State.Running);
    t.deepEqual(gerbil.HostConfig.PortBindings, bindingsOf(OLD_PORTS), 'with its old ports');
    const traefik = await docker.getContainer('traefik').inspect();
    t.is(traefik.Id, old.traefik.Id);
    t.true(traefik.State.Running, 'traefik runs again in the old gerbil');
    t.deepEqual((await containerNames(docker)).sort(), ['gerbil', 'traefik'], 'no new or renamed container is left');
  },
);

engineTest(
  'a traefik of its own is restarted; while the job waits, a second apply, an update and stop of traefik answer 409 busy',
  async (t) => {
    const { docker } = t.context.engine!;
    const h = await applyHarness(t, t.context.engine!, OLD_PORTS);
    const old = await createPair(docker, h, OLD_PORTS, true);

    const reply = await h.app.inject({ method: 'POST', url: '/api/static/apply' });
    t.is(reply.statusCode, 202, reply.body);
    const accepted = reply.json() as Job;
    t.deepEqual(
      accepted.steps.map((s) => `${s.service}:${s.step}`),
      [
        'traefik:restart',
        'traefik:health',
        'gerbil:rename',
        'gerbil:create',
        'gerbil:start',
        'gerbil:health',
        'gerbil:cleanup',
        'traefik:entrypoints',
      ],
    );
    await waitFor(async () => {
      const job = (await h.app.inject({ url: `/api/jobs/${accepted.id}` })).json() as Job;
      return stepOf(job, 'traefik', 'entrypoints')!.status === 'running';
    }, 120_000);

    const second = await h.app.inject({ method: 'POST', url: '/api/static/apply', payload: { services: ['traefik'] } });
    t.is(second.statusCode, 409, second.body);
    t.like(second.json(), { id: 'busy' });
    t.true((second.json() as { message: string }).message.includes(accepted.id), 'names the running job');
    const update = await h.app.inject({
      method: 'POST',
      url: '/api/container/update',
      payload: { services: ['crowdsec'] },
    });
    t.is(update.statusCode, 409, update.body);
    t.like(update.json(), { id: 'busy' });
    const stop = await h.app.inject({
      method: 'POST',
      url: '/api/container/container/stop',
      payload: { container_name: 'traefik' },
    });
    t.is(stop.statusCode, 409, stop.body);

    h.traefik.lists.entrypoints.push({ name: 'tcp-2222', address: ':2222/tcp' });
    const job = await finished(h.app, accepted.id);
    t.is(job.status, 'succeeded', JSON.stringify(job, null, 1));
    t.regex(stepOf(job, 'traefik', 'restart')!.message, /^restarted traefik/);
    t.regex(stepOf(job, 'traefik', 'health')!.message, /^running for .* \(the image has no healthcheck\)$/);
    t.like(stepOf(job, 'gerbil', 'create'), { status: 'skipped' });

    const traefik = await docker.getContainer('traefik').inspect();
    t.is(traefik.Id, old.traefik.Id, 'restarted, not recreated');
    t.not(traefik.State.StartedAt, old.traefik.State.StartedAt, 'started again');
    t.is((await docker.getContainer('gerbil').inspect()).Id, old.gerbil.Id, 'gerbil untouched');
    const list = (await h.app.inject({ url: '/api/jobs' })).json() as Job[];
    t.deepEqual(
      list.map((j) => j.id),
      [accepted.id],
      'the refused requests made no job',
    );
    const free = await h.app.inject({
      method: 'POST',
      url: '/api/container/container/restart',
      payload: { container_name: 'traefik' },
    });
    t.is(free.statusCode, 200, 'released when the job ends');
  },
);

engineTest('a stack container that does not exist answers 422 naming it, and starts nothing', async (t) => {
  const { docker } = t.context.engine!;
  for (const c of await docker.listContainers({ all: true })) await docker.getContainer(c.Id).remove({ force: true });
  const h = await applyHarness(t, t.context.engine!, OLD_PORTS);
  const reply = await h.app.inject({ method: 'POST', url: '/api/static/apply', payload: { services: ['gerbil'] } });
  t.is(reply.statusCode, 422, reply.body);
  t.like(reply.json(), {
    id: 'validation_failed',
    details: [
      {
        path: '/services/0',
        message: 'no stack container named gerbil or labelled com.docker.compose.service=gerbil',
      },
    ],
  });
  t.deepEqual((await h.app.inject({ url: '/api/jobs' })).json(), []);
});

engineTest(
  'Traefik that never lists an entry point fails the job at entrypoints after health_timeout_s, naming what is missing; the restarted Traefik keeps running',
  async (t) => {
    const { docker } = t.context.engine!;
    const h = await applyHarness(t, t.context.engine!, OLD_PORTS);
    const old = await createPair(docker, h, OLD_PORTS, true);
    const reply = await h.app.inject({
      method: 'POST',
      url: '/api/static/apply',
      payload: { services: ['traefik'], health_timeout_s: 10 },
    });
    t.is(reply.statusCode, 202, reply.body);
    const accepted = reply.json() as Job;
    t.deepEqual(
      accepted.steps.map((s) => `${s.service}:${s.step}`),
      ['traefik:restart', 'traefik:health', 'traefik:entrypoints'],
    );
    const job = await finished(h.app, accepted.id);
    t.is(job.status, 'failed', JSON.stringify(job, null, 1));
    const step = stepOf(job, 'traefik', 'entrypoints')!;
    t.is(step.status, 'failed');
    t.regex(
      step.message,
      /^Traefik did not list the static config's entry points within 10 s \(traefik lists web, websecure; missing tcp-2222\)/,
    );
    t.is(job.error, `apply failed at entrypoints: ${step.message}`);
    const traefik = await docker.getContainer('traefik').inspect();
    t.is(traefik.Id, old.traefik.Id);
    t.true(traefik.State.Running, 'no rollback: Traefik runs its new static config');
  },
);
