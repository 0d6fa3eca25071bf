/**
 * POST /api/container/update against a real registry (docker-registry) and a private dockerd:
 * v1 → v2 with the settings kept, a failing healthcheck rolled back, a registry down at pull,
 * and the update check before and after.
 */
import { PassThrough } from 'node:stream';
import { buildAndPush, publishNewer, startRegistry } from './registry.ts';
import {
  containerNames,
  createService,
  engineAndRegistryTests,
  finished,
  stepOf,
  updateApp,
  type Job,
} from './update-support.ts';

const { updateTest } = engineAndRegistryTests('container update tests');

updateTest(
  'update v1 → v2: new image and container, old one gone, labels, restart policy, network mode and a namespace dependant kept; the update check turns from true to false',
  async (t) => {
    const engine = t.context.engine!;
    const docker = engine.docker;
    const reference = `${t.context.registry!.host}/stack/svc-ok:1`;
    const v1 = await buildAndPush(engine, reference, { content: 'v1', labels: { 'org.example.version': '1' } });
    const old = await createService(docker, {
      name: 'svc-ok',
      image: reference,
      labels: { 'com.example.role': 'proxy' },
    });
    const side = await createService(docker, {
      name: 'svc-ok-side',
      image: reference,
      networkMode: 'container:svc-ok',
    });
    // v2 brings a healthcheck: the health step waits for `healthy`
    const v2 = await publishNewer(engine, reference, v1.id, {
      content: 'v2',
      labels: { 'org.example.version': '2' },
      healthcheck: 'true',
    });
    t.not(v1.digest, v2.digest);
    const logs: Array<Record<string, unknown>> = [];
    const logStream = new PassThrough();
    logStream.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) if (line) logs.push(JSON.parse(line));
    });
    const server = await updateApp(t, engine, 1, { log: { level: 'info' } }, logStream);

    const before = (await server.inject({ method: 'GET', url: '/api/container/updates?refresh=true' })).json() as Array<
      Record<string, unknown>
    >;
    t.like(
      before.find((u) => u.service === 'svc-ok'),
      { image: reference, current_digest: v1.digest, latest_digest: v2.digest, update_available: true, error: null },
    );

    const reply = await server.inject({
      method: 'POST',
      url: '/api/container/update',
      payload: { services: ['svc-ok'] },
    });
    t.is(reply.statusCode, 202, reply.body);
    const accepted = reply.json() as Job;
    t.regex(accepted.id, /^job-[0-9a-hjkmnp-tv-z]{26}$/);
    t.is(reply.headers.location, `/api/jobs/${accepted.id}`);
    t.like(accepted, {
      kind: 'container_update',
      status: 'queued',
      progress: 0,
      params: { services: ['svc-ok'], backup: false, health_timeout_s: 120 },
    });
    t.deepEqual(
      accepted.steps.map((s) => `${s.service}:${s.step}`),
      [
        'svc-ok:pull',
        'svc-ok:rename',
        'svc-ok:create',
        'svc-ok:start',
        'svc-ok:health',
        'svc-ok-side:rename',
        'svc-ok-side:create',
        'svc-ok-side:start',
        'svc-ok-side:health',
        'svc-ok:cleanup',
        'svc-ok-side:cleanup',
      ],
    );

    const job = await finished(server, accepted.id);
    t.is(job.status, 'succeeded', JSON.stringify(job, null, 1));
    t.is(job.progress, 1);
    t.is(job.error, null);
    t.true(
      job.steps.every((s) => s.status === 'ok' && s.started_at && s.finished_at),
      JSON.stringify(job.steps),
    );
    t.regex(stepOf(job, 'svc-ok', 'health')!.message, /^healthy after \d+\.\d s$/);
    const ms = Date.parse(job.finished_at!) - Date.parse(job.started_at!);
    t.log(
      `update of one container (+ one namespace dependant), job start to succeeded: ${ms} ms (healthcheck every 1 s)`,
    );

    const now = await docker.getContainer('svc-ok').inspect();
    t.is(now.Image, v2.id, 'runs the new image');
    t.not(now.Id, old.Id, 'a new container');
    t.true(now.State.Running);
    t.is(now.Config.Image, reference, 'same reference');
    t.is(now.Config.Labels['com.example.role'], 'proxy', 'the user label is kept');
    t.is(now.Config.Labels['org.example.version'], '2', 'image labels come from the new image');
    t.true(now.Config.Env.includes('STACK_TEST=1'));
    t.deepEqual(now.HostConfig.RestartPolicy, old.HostConfig.RestartPolicy);
    t.is(now.HostConfig.NetworkMode, 'none');
    t.deepEqual(Object.keys(now.NetworkSettings.Networks), Object.keys(old.NetworkSettings.Networks));
    await t.throwsAsync(
      docker.getContainer(old.Id).inspect(),
      { message: /no such container/i },
      'the old container is removed',
    );

    const sideNow = await docker.getContainer('svc-ok-side').inspect();
    t.not(sideNow.Id, side.Id, 'the dependant was recreated');
    t.true(sideNow.State.Running);
    // Docker stores the namespace owner by id: the replacement must point at the new owner
    t.is(side.HostConfig.NetworkMode, `container:${old.Id}`);
    t.is(sideNow.HostConfig.NetworkMode, `container:${now.Id}`, 'it joins the new container');
    t.deepEqual(
      (await containerNames(docker)).filter((n) => n.includes('-old-')),
      [],
      'no -old- leftover',
    );

    const after = (await server.inject({ method: 'GET', url: '/api/container/updates' })).json() as Array<
      Record<string, unknown>
    >;
    t.like(
      after.find((u) => u.service === 'svc-ok'),
      { current_digest: v2.digest, latest_digest: v2.digest, update_available: false },
    );

    // the server log tells the same story, one line per step change
    const stepLines = logs.filter((l) => l.job_id === job.id && l.msg === 'job step' && l.status === 'ok');
    t.deepEqual(
      stepLines.map((l) => `${l.service}:${l.step}`),
      job.steps.map((s) => `${s.service}:${s.step}`),
      'in the order they ran',
    );
    t.regex(
      String(stepLines.find((l) => l.service === 'svc-ok' && l.step === 'rename')!.message),
      /^renamed to svc-ok-old-\d+ and stopped$/,
    );
    t.truthy(logs.find((l) => l.job_id === job.id && l.msg === 'job succeeded'));
  },
);

updateTest(
  'a v2 whose healthcheck fails is rolled back: the old container runs again with its id and name, the job fails naming health, later services are skipped',
  async (t) => {
    const engine = t.context.engine!;
    const docker = engine.docker;
    const reference = `${t.context.registry!.host}/stack/svc-bad:1`;
    const v1 = await buildAndPush(engine, reference, { content: 'v1', healthcheck: 'true' });
    const old = await createService(docker, { name: 'svc-bad', image: reference });
    const other = await createService(docker, { name: 'svc-other', image: reference });
    await publishNewer(engine, reference, v1.id, { content: 'v2', healthcheck: 'false' });
    const server = await updateApp(t, engine);

    const reply = await server.inject({
      method: 'POST',
      url: '/api/container/update',
      payload: { services: ['svc-bad', 'svc-other'], health_timeout_s: 30 },
    });
    t.is(reply.statusCode, 202, reply.body);
    const job = await finished(server, (reply.json() as Job).id);
    t.is(job.status, 'failed');
    t.regex(
      job.error!,
      /^update of svc-bad failed at health: the healthcheck reports unhealthy.*; rolled back: svc-bad/,
    );
    t.like(stepOf(job, 'svc-bad', 'health'), { status: 'failed' });
    t.like(stepOf(job, 'svc-bad', 'rollback'), { status: 'ok' });
    t.like(stepOf(job, 'svc-bad', 'cleanup'), { status: 'skipped' });
    t.true(
      job.steps.filter((s) => s.service === 'svc-other').every((s) => s.status === 'skipped'),
      'the next service is skipped',
    );
    t.deepEqual(job.steps.map((s) => `${s.service}:${s.step}`).slice(0, 7), [
      'svc-bad:pull',
      'svc-bad:rename',
      'svc-bad:create',
      'svc-bad:start',
      'svc-bad:health',
      'svc-bad:cleanup',
      'svc-bad:rollback',
    ]);

    const now = await docker.getContainer('svc-bad').inspect();
    t.is(now.Id, old.Id, 'the old container, under its old name');
    t.is(now.Image, v1.id);
    t.true(now.State.Running);
    t.is((await docker.getContainer('svc-other').inspect()).Id, other.Id, 'the skipped service is untouched');
    const names = await containerNames(docker);
    t.deepEqual(
      names.filter((n) => n.includes('-old-')),
      [],
      'no -old- leftover',
    );
    t.is(names.filter((n) => n.startsWith('svc-bad')).length, 1, 'the new container is removed');

    // the tag now names the pulled v2, but the container runs v1: the update is still available
    const check = (await server.inject({ method: 'GET', url: '/api/container/updates' })).json() as Array<
      Record<string, unknown>
    >;
    t.like(
      check.find((u) => u.service === 'svc-bad'),
      { current_digest: v1.digest, update_available: true, error: null },
    );
  },
);

updateTest(
  'registry down during pull: the job fails at pull naming the registry, the container is untouched',
  async (t) => {
    const engine = t.context.engine!;
    const docker = engine.docker;
    const doomed = await startRegistry();
    const reference = `${doomed.host}/stack/svc-down:1`;
    await buildAndPush(engine, reference, { content: 'v1' });
    const old = await createService(docker, { name: 'svc-down', image: reference });
    await doomed.stop();
    const server = await updateApp(t, engine);

    const reply = await server.inject({
      method: 'POST',
      url: '/api/container/update',
      payload: { services: ['svc-down'] },
    });
    t.is(reply.statusCode, 202, reply.body);
    const job = await finished(server, (reply.json() as Job).id);
    t.is(job.status, 'failed');
    t.true(
      job.error!.startsWith(
        `update of svc-down failed at pull: registry ${doomed.host} could not be reached or refused the pull of ${reference}: `,
      ),
      job.error!,
    );
    t.false(job.error!.includes('server error - '), "Docker's message without the client library's prefix");
    t.like(stepOf(job, 'svc-down', 'pull'), { status: 'failed' });
    t.true(job.steps.filter((s) => s.step !== 'pull').every((s) => s.status === 'skipped'));
    t.is(
      job.steps.find((s) => s.step === 'rollback'),
      undefined,
      'nothing to roll back',
    );

    const now = await docker.getContainer('svc-down').inspect();
    t.is(now.Id, old.Id);
    t.true(now.State.Running);
    t.deepEqual(
      (await containerNames(docker)).filter((n) => n.includes('-old-')),
      [],
    );
  },
);
