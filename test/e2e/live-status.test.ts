/**
 * Live status (API.md §4.19) against the real Traefik 3.7: what Stack Manager says about each
 * resource is what Traefik's API reports and what a client sees through Traefik — `live` and 200;
 * a plugin middleware whose plugin Traefik lacks → `disabled` with Traefik's error verbatim, a
 * finding naming the resource, 404, and both cleared when the assignment goes; Traefik stopped →
 * `traefik_unreachable` and every resource `unknown`, started again → `live`.
 */
import test from 'ava';
import { hookTeardowns } from '../helpers/hook-context.ts';
import { traefikTest, TRAEFIK_BIN, TRAEFIK_VERSION } from '../helpers/traefik.ts';
import { waitFor } from '../helpers/wait.ts';
import {
  data,
  diagnosis,
  findingId,
  liveOf,
  startLiveStack,
  waitForCleared,
  waitForFinding,
  waitForLive,
  type LiveStack,
} from './live-support.ts';

const e2e = traefikTest(test);
const hook = hookTeardowns(test);
let stack: LiveStack;

const RESOURCES = [
  { id: 1, name: 'app', host: 'app.test', backends: ['app'] },
  { id: 2, name: 'plug', host: 'plug.test', backends: ['plug'] },
];
const IDS = ['1-app-router', '2-plug-router'];
let started = 0;

test.before(async (t) => {
  if (!TRAEFIK_BIN) return;
  stack = await startLiveStack(hook.context(t), { backends: ['app', 'plug'], resources: RESOURCES });
  started = Date.now();
});

e2e('a resource Traefik runs as we emit it is live, and answers 200 through Traefik', async (t) => {
  const reply = await stack.traefik.waitForReply(
    { entryPoint: 'websecure', host: 'app.test' },
    (r) => r.status === 200,
  );
  t.is(reply.json.backend, 'app');
  const [router] = await stack.traefik.waitForRouters(['1-app-router']);
  t.is(router.status, 'enabled');

  const { live, seconds } = await waitForLive(stack, '1-app-router', 'live', started);
  t.log(`live ${seconds.toFixed(1)} s after Traefik listed the routers`);
  t.deepEqual(live.instances, [{ source: 'traefik', state: 'live', errors: [], traefik_version: TRAEFIK_VERSION }]);
  t.false(Number.isNaN(Date.parse(live.checked_at)), live.checked_at);
  // the list carries it too and filters on it
  const list = await stack.sm.call('GET', '/api/resources?live=live');
  t.is(list.status, 200, list.text);
  t.true(
    list.json.some((r: { id: string }) => r.id === '1-app-router'),
    list.text,
  );
  const none = await stack.sm.call('GET', '/api/resources?live=disabled');
  t.is(none.status, 200, none.text);
  t.deepEqual(
    none.json.map((r: { id: string }) => r.id),
    [],
  );

  const view = await diagnosis(stack);
  t.like(view.instances[0], { source: 'traefik', reachable: true, version: TRAEFIK_VERSION, document: 'current' });
  t.deepEqual(
    view.findings.filter((f: { severity: string }) => f.severity === 'error'),
    [],
  );
});

e2e(
  'a plugin Traefik lacks: the resource is disabled with Traefik’s error, a finding names it, 404; removing the assignment clears both',
  async (t) => {
    const request = { entryPoint: 'websecure', host: 'plug.test' };
    await stack.traefik.waitForReply(request, (r) => r.status === 200);
    await waitForLive(stack, '2-plug-router', 'live', Date.now());
    const created = await stack.sm.call('POST', '/api/middlewares', {
      id: 'nothere-mw',
      name: 'plugin Traefik lacks',
      type: 'plugin',
      config: { notthere: { value: 'x' } },
    });
    t.is(created.status, 201, created.text);
    const changed = Date.now();
    const from = stack.events.events.length;
    const assigned = await stack.sm.call('POST', '/api/resources/2-plug-router/middlewares', {
      middleware_id: 'nothere-mw',
    });
    t.is(assigned.status, 200, assigned.text);

    // Traefik's side: the router is disabled with its own words, and the host answers 404
    const reply = await stack.traefik.waitForReply(request, (r) => r.status === 404);
    t.is(reply.status, 404);
    const router = await waitFor(async () => {
      const found = await stack.traefik.api('/api/http/routers/2-plug-router@http');
      return found.status === 'disabled' ? found : null;
    }, 3_000);
    t.log('Traefik router:', JSON.stringify({ status: router.status, error: router.error }));
    t.true(
      router.error.some((e: string) => e.includes('unknown plugin type: notthere')),
      JSON.stringify(router.error),
    );
    const middleware = await stack.traefik.api('/api/http/middlewares/nothere-mw@http');
    t.is(middleware.status, 'disabled');

    // ours: the same state and the same texts
    const { live, seconds } = await waitForLive(stack, '2-plug-router', 'disabled', changed);
    t.log(`disabled ${seconds.toFixed(1)} s after the assignment`);
    t.deepEqual(live.instances, [
      { source: 'traefik', state: 'disabled', errors: router.error, traefik_version: TRAEFIK_VERSION },
    ]);
    const filtered = await stack.sm.call('GET', '/api/resources?live=disabled');
    t.deepEqual(
      filtered.json.map((r: { id: string }) => r.id),
      ['2-plug-router'],
    );
    const raised = await waitForFinding(
      stack,
      (f) => ['plugins_disabled', 'middleware_error'].includes(f.kind) && f.resources.includes('2-plug-router'),
      changed,
    );
    t.log(
      `finding ${raised.finding.id} ${raised.seconds.toFixed(1)} s after the assignment: ${raised.finding.message}`,
    );
    t.is(raised.finding.severity, 'error');
    t.true(raised.finding.middlewares.includes('nothere-mw@http'), JSON.stringify(raised.finding));
    t.false(raised.finding.resources.includes('1-app-router'), JSON.stringify(raised.finding));
    t.true(raised.finding.fix.length > 0);
    // the resource next to it is untouched
    t.is((await liveOf(stack, '1-app-router')).state, 'live');
    // events: the state change and the finding
    const event = await stack.events.next(
      (e) => e.event === 'live' && data(e).resource === '2-plug-router' && data(e).state === 'disabled',
      10_000,
      from,
    );
    // previous: live, or outdated when a check fell between the generation and Traefik applying it
    // (settle_s 1 is less than Traefik's pollInterval 1 s plus its providersThrottleDuration 2 s)
    t.log('live event:', event.data);
    t.true(['live', 'outdated'].includes(data(event).previous), event.data);
    await stack.events.next(
      (e) => e.event === 'diagnosis' && findingId(e) === raised.finding.id && data(e).action === 'raised',
      10_000,
      from,
    );

    // the fix: the assignment goes; Traefik routes again and both clear
    const fixed = Date.now();
    const after = stack.events.events.length;
    const removed = await stack.sm.call('DELETE', '/api/resources/2-plug-router/middlewares/nothere-mw');
    t.is(removed.status, 204, removed.text);
    const back = await stack.traefik.waitForReply(request, (r) => r.status === 200);
    t.is(back.json.backend, 'plug');
    const again = await waitForLive(stack, '2-plug-router', 'live', fixed);
    const cleared = await waitForCleared(stack, raised.finding.id, fixed);
    t.log(`live again ${again.seconds.toFixed(1)} s, finding cleared ${cleared.toFixed(1)} s after the removal`);
    t.deepEqual(again.live.instances[0].errors, []);
    await stack.events.next(
      (e) => e.event === 'diagnosis' && findingId(e) === raised.finding.id && data(e).action === 'cleared',
      10_000,
      after,
    );
    const live2 = await stack.events.next(
      (e) => e.event === 'live' && data(e).resource === '2-plug-router' && data(e).state === 'live',
      10_000,
      after,
    );
    t.is(data(live2).previous, 'disabled');
    t.is((await stack.sm.call('DELETE', '/api/middlewares/nothere-mw')).status, 204);
  },
);

// last: it stops the shared Traefik
e2e('Traefik stopped: traefik_unreachable and every resource unknown; started again: live', async (t) => {
  for (const id of IDS) await waitForLive(stack, id, 'live', Date.now());
  const stopped = Date.now();
  await stack.traefik.stop();
  const raised = await waitForFinding(stack, (f) => f.kind === 'traefik_unreachable', stopped);
  t.log(`${raised.finding.id} ${raised.seconds.toFixed(1)} s after the stop: ${raised.finding.message}`);
  t.is(raised.finding.severity, 'error');
  t.true(raised.finding.fix.length > 0);
  for (const id of IDS) {
    const { live, seconds } = await waitForLive(stack, id, 'unknown', stopped);
    t.log(`${id} unknown ${seconds.toFixed(1)} s after the stop: ${JSON.stringify(live.instances[0].errors)}`);
    t.is(live.instances[0].state, 'unknown');
    t.true(live.instances[0].errors.length > 0, 'says why');
  }
  const view = await diagnosis(stack);
  t.like(view.instances[0], { source: 'traefik', reachable: false });
  const filtered = await stack.sm.call('GET', '/api/resources?live=unknown');
  t.deepEqual(filtered.json.map((r: { id: string }) => r.id).sort(), IDS);

  const restarted = Date.now();
  await stack.traefik.restart();
  await stack.traefik.waitForReply({ entryPoint: 'websecure', host: 'app.test' }, (r) => r.status === 200);
  for (const id of IDS) {
    const { seconds } = await waitForLive(stack, id, 'live', restarted);
    t.log(`${id} live ${seconds.toFixed(1)} s after the start`);
  }
  const cleared = await waitForCleared(stack, raised.finding.id, restarted);
  t.log(`${raised.finding.id} cleared ${cleared.toFixed(1)} s after the start`);
  t.like((await diagnosis(stack)).instances[0], { reachable: true, version: TRAEFIK_VERSION });
});
