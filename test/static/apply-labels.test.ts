/**
 * POST /api/static/apply when compose named the containers `<project>-<service>-1` (API.md §4.20):
 * Traefik and Gerbil are found by their `com.docker.compose.service` label, recreated under their own
 * names on a private dockerd, and several containers of one service are refused with 422.
 */
import { waitFor } from '../helpers/wait.ts';
import { TEST_IMAGE } from '../containers/support.ts';
import { containerNames, finished, stepOf, type Job } from '../containers/update-support.ts';
import type { ExecutionContext } from 'ava';
import {
  applyHarness,
  bindingsOf,
  createPair,
  engineTests,
  OLD_PORTS,
  type ApplyHarness,
  type PairNames,
} from './apply-support.ts';

const { engineTest } = engineTests('static apply by compose label tests');

const NEW_PORTS = [...OLD_PORTS, '2222:2222'];
const PROJECT = 'pangolin';
const labels = (service: string) => ({
  'com.docker.compose.project': PROJECT,
  'com.docker.compose.service': service,
});
const COMPOSE_NAMES: PairNames = {
  gerbil: 'pangolin-gerbil-1',
  traefik: 'pangolin-traefik-1',
  labels: { gerbil: labels('gerbil'), traefik: labels('traefik') },
};
// stack.project mode: the stack is what carries the project label, whatever the names
const PROJECT_STACK = { stack: { containers: [], project: PROJECT, compose_file: '' } };

/** The harness's compose file, set through the API (the `stack` override above leaves none). */
async function setComposeFile(t: ExecutionContext, h: ApplyHarness): Promise<void> {
  const reply = await h.app.inject({
    method: 'PUT',
    url: '/api/static/settings',
    payload: { compose_file: h.composeFile },
  });
  t.is(reply.statusCode, 200, reply.body);
}

engineTest(
  'containers named pangolin-gerbil-1 / pangolin-traefik-1 are found by their compose service label and recreated under their names',
  async (t) => {
    const { docker } = t.context.engine!;
    const h = await applyHarness(t, t.context.engine!, NEW_PORTS, PROJECT_STACK);
    const { app } = h;
    const old = await createPair(docker, h, OLD_PORTS, false, COMPOSE_NAMES);
    await setComposeFile(t, h);

    const reply = await app.inject({ method: 'POST', url: '/api/static/apply', payload: {} });
    t.is(reply.statusCode, 202, reply.body);
    const accepted = reply.json() as Job;
    t.deepEqual(
      accepted.steps.map((s) => `${s.service}:${s.step}`),
      [
        'pangolin-gerbil-1:rename',
        'pangolin-gerbil-1:create',
        'pangolin-gerbil-1:start',
        'pangolin-gerbil-1:health',
        'pangolin-traefik-1:rename',
        'pangolin-traefik-1:create',
        'pangolin-traefik-1:start',
        'pangolin-traefik-1:health',
        'pangolin-gerbil-1:cleanup',
        'pangolin-traefik-1:cleanup',
        'pangolin-traefik-1:entrypoints',
      ],
      "the label's containers, traefik recreated in gerbil's namespace",
    );
    // the entry point wait: the fake Traefik API gains tcp-2222 once the wait has begun
    await waitFor(async () => {
      const job = (await app.inject({ url: `/api/jobs/${accepted.id}` })).json() as Job;
      return stepOf(job, 'pangolin-traefik-1', 'entrypoints')?.status === 'running';
    }, 120_000);
    h.traefik.lists.entrypoints.push({ name: 'tcp-2222', address: ':2222/tcp' });

    const job = await finished(app, accepted.id);
    t.is(job.status, 'succeeded', JSON.stringify(job, null, 1));
    const gerbil = await docker.getContainer('pangolin-gerbil-1').inspect();
    t.not(gerbil.Id, old.gerbil.Id, 'a new gerbil');
    t.true(gerbil.State.Running);
    t.deepEqual(gerbil.HostConfig.PortBindings, bindingsOf(NEW_PORTS), 'docker inspect shows the new port');
    t.like(gerbil.Config.Labels, labels('gerbil'), 'compose labels kept');
    const newTraefik = await docker.getContainer('pangolin-traefik-1').inspect();
    t.not(newTraefik.Id, old.traefik.Id);
    t.is(newTraefik.HostConfig.NetworkMode, `container:${gerbil.Id}`);
    t.deepEqual((await containerNames(docker)).sort(), ['pangolin-gerbil-1', 'pangolin-traefik-1']);
  },
);

engineTest(
  'by name: a container named traefik wins over a labelled one; two stack containers labelled gerbil → 422 naming them, no job',
  async (t) => {
    const { docker } = t.context.engine!;
    const h = await applyHarness(t, t.context.engine!, NEW_PORTS, {
      stack: { containers: ['traefik', 'gerbil-a', 'gerbil-b', 'other-traefik'], project: '', compose_file: '' },
    });
    await createPair(docker, h, OLD_PORTS, true, {
      gerbil: 'gerbil-a',
      traefik: 'traefik',
      labels: { gerbil: labels('gerbil') },
    });
    await setComposeFile(t, h);
    for (const name of ['gerbil-b', 'other-traefik']) {
      const extra = await docker.createContainer({
        name,
        Image: TEST_IMAGE,
        Cmd: ['sh', '-c', 'while true; do sleep 1; done'],
        Labels: labels(name === 'gerbil-b' ? 'gerbil' : 'traefik'),
        HostConfig: { NetworkMode: 'none', Init: true },
      });
      await extra.start();
    }
    const reply = await h.app.inject({ method: 'POST', url: '/api/static/apply', payload: {} });
    t.is(reply.statusCode, 422, reply.body);
    t.deepEqual(reply.json().details, [
      {
        path: '/services/1',
        message:
          'several stack containers are labelled com.docker.compose.service=gerbil (gerbil-a, gerbil-b); keep one in the stack',
      },
    ]);
    t.deepEqual((await h.app.inject({ url: '/api/jobs' })).json(), [], 'nothing started');

    // traefik alone: the container named traefik, not other-traefik with the label
    const alone = await h.app.inject({
      method: 'POST',
      url: '/api/static/apply',
      payload: { services: ['traefik'], health_timeout_s: 10 },
    });
    t.is(alone.statusCode, 202, alone.body);
    t.deepEqual(
      (alone.json() as Job).steps.map((s) => `${s.service}:${s.step}`),
      ['traefik:restart', 'traefik:health', 'traefik:entrypoints'],
    );
    h.traefik.lists.entrypoints.push({ name: 'tcp-2222', address: ':2222/tcp' });
    const job = await finished(h.app, (alone.json() as Job).id);
    t.is(job.status, 'succeeded', JSON.stringify(job, null, 1));
  },
);
