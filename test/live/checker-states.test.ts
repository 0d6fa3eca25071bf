/** Resource `live` states from a fake Traefik API (API.md §4.19, §4.4 `live`, `?live=`). */
import test from 'ava';
import { GRAFANA, NEXTCLOUD, liveHarness, newGeneration } from './checker-support.ts';
import { manualClock } from '../proxy/support.ts';
import { build } from '../helpers/build.ts';
import { startFakeTraefikApi } from '../helpers/fake-traefik-api.ts';

test('each state: live, disabled with Traefik errors verbatim, warning, missing, outdated, and unknown when Traefik is down', async (t) => {
  const h = await liveHarness(t);
  h.follow();
  const live = await h.until(async () => {
    const value = await h.live(NEXTCLOUD.id);
    return value.state === 'live' ? value : null;
  });
  t.like(live.instances[0], { source: 'traefik', state: 'live', errors: [], traefik_version: '3.7.15' });
  t.truthy(live.checked_at);

  // Traefik disables the router: its error texts verbatim
  const errors = ['middleware "nope@file" does not exist'];
  Object.assign(h.traefik.router(NEXTCLOUD.router), { status: 'disabled', error: errors });
  const disabled = await h.until(async () => {
    const value = await h.live(NEXTCLOUD.id);
    return value.state === 'disabled' ? value : null;
  });
  t.deepEqual(disabled.instances[0].errors, errors);
  // the other resources stay live; the filter finds each by its state
  const byState = async (state: string) =>
    (await h.app.inject({ url: `/api/resources?live=${state}` })).json().map((r: { id: string }) => r.id);
  t.deepEqual(await byState('disabled'), [NEXTCLOUD.id]);
  t.true((await byState('live')).includes(GRAFANA.id));
  t.false((await byState('live')).includes(NEXTCLOUD.id));
  t.is((await h.app.inject({ url: '/api/resources?live=bogus' })).statusCode, 422);

  Object.assign(h.traefik.router(NEXTCLOUD.router), { status: 'warning', error: ['a warning from Traefik'] });
  const warning = await h.until(async () => {
    const value = await h.live(NEXTCLOUD.id);
    return value.state === 'warning' ? value : null;
  });
  t.deepEqual(warning.instances[0].errors, ['a warning from Traefik']);

  // Traefik runs another rule: outdated (settle 0: only the latest document is accepted)
  Object.assign(h.traefik.router(NEXTCLOUD.router), {
    status: 'enabled',
    error: undefined,
    rule: 'Host(`old.example.com`)',
  });
  await h.until(async () => (await h.live(NEXTCLOUD.id)).state === 'outdated');

  // Traefik lacks the router: missing
  h.traefik.lists.http.routers = h.traefik.lists.http.routers.filter((r) => r.name !== NEXTCLOUD.router);
  await h.until(async () => (await h.live(NEXTCLOUD.id)).state === 'missing');

  // Traefik down: every resource unknown, with the reason
  await h.traefik.down();
  const down = await h.until(async () => {
    const value = await h.live(GRAFANA.id);
    return value.state === 'unknown' ? value : null;
  });
  t.regex(down.instances[0].errors[0], /Traefik (refused|closed) the connection/);
  t.deepEqual(await byState('live'), []);
});

test('a resource is outdated only once the settle time has passed after our newer document; the instance is behind after settle×3', async (t) => {
  const clock = manualClock();
  const h = await liveHarness(t, { settle_s: 5, now: clock.now });
  h.follow();
  await h.until(async () => (await h.live(GRAFANA.id)).state === 'live');
  await newGeneration(t, h);
  // Traefik still runs the previous document: within the settle time that is fine
  await h.until(async () => (await h.live(GRAFANA.id)).state === 'live');
  t.like((await h.diagnosis()).instances[0], { document: 'current', reachable: true, version: '3.7.15' });
  clock.advance(6000);
  const outdated = await h.until(async () => {
    const value = await h.live(GRAFANA.id);
    return value.state === 'outdated' ? value : null;
  });
  t.regex(outdated.instances[0].errors.at(-1)!, /priority/);
  // still one of our documents of the last settle×3 s
  t.is((await h.diagnosis()).instances[0].document, 'current');
  clock.advance(10_000);
  const behind = await h.until(async () => {
    const value = await h.diagnosis();
    return value.instances[0].document === 'behind' ? value : null;
  });
  t.truthy(behind.instances[0].since);
  t.true(behind.findings.some((f) => f.kind === 'document_behind'));
  // Traefik takes the latest document: live again, current
  h.follow();
  await h.until(async () => (await h.live(GRAFANA.id)).state === 'live');
  t.is((await h.diagnosis()).instances[0].document, 'current');
});

test('without a traefik data source every resource is unknown with no instances', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' }, live: { settle_s: 0, interval_s: 1 } } });
  const removed = await app.inject({ method: 'DELETE', url: '/api/datasource/traefik' });
  t.is(removed.statusCode, 204, removed.body);
  await app.liveStatus.checkAll();
  const diagnosis = await app.inject({ url: '/api/proxy-config/diagnosis?refresh=true' });
  t.is(diagnosis.statusCode, 200, diagnosis.body);
  t.deepEqual(diagnosis.json().instances, []);
  t.is(diagnosis.json().checked_at, null);
  t.deepEqual(app.liveStatus.resource('anything'), { state: 'unknown', checked_at: null, instances: [] });
});

test('two Traefik instances: each has its state, the resource the worst; a source added joins, a removed one leaves', async (t) => {
  const h = await liveHarness(t);
  h.follow();
  await h.until(async () => (await h.live(NEXTCLOUD.id)).state === 'live');
  // a second traefik data source (a second Traefik polling the same document), added through the API
  const second = await startFakeTraefikApi();
  t.teardown(() => second.close());
  second.load(h.app.proxyConfig.current()!.served as Record<string, any>);
  Object.assign(second.router(NEXTCLOUD.router), {
    status: 'disabled',
    error: ['plugin: unknown plugin type: badger'],
  });
  const badger = second.lists.http.middlewares.find((m) => m.name === 'badger@http')!;
  Object.assign(badger, { status: 'disabled', error: ['plugin: unknown plugin type: badger'] });
  second.version.Version = '3.6.2';
  const added = await h.app.inject({
    method: 'PUT',
    url: '/api/datasource/traefik-b',
    payload: { type: 'traefik', url: second.url, timeout_ms: 60_000 },
  });
  t.true([200, 201].includes(added.statusCode), added.body);
  const both = await h.until(async () => {
    const value = await h.live(NEXTCLOUD.id);
    return value.instances.length === 2 && value.instances[1].state === 'disabled' ? value : null;
  });
  t.is(both.state, 'disabled');
  t.deepEqual(both.instances, [
    { source: 'traefik', state: 'live', errors: [], traefik_version: '3.7.15' },
    {
      source: 'traefik-b',
      state: 'disabled',
      errors: ['plugin: unknown plugin type: badger'],
      traefik_version: '3.6.2',
    },
  ]);
  const grafana = await h.live(GRAFANA.id);
  t.deepEqual(
    grafana.instances.map((i) => [i.source, i.state]),
    [
      ['traefik', 'live'],
      ['traefik-b', 'live'],
    ],
  );
  const diagnosis = await h.diagnosis();
  t.deepEqual(
    diagnosis.instances.map((i) => [i.source, i.reachable, i.version, i.document]),
    [
      ['traefik', true, '3.7.15', 'current'],
      ['traefik-b', true, '3.6.2', 'current'],
    ],
  );
  t.true(diagnosis.findings.some((f) => f.id.startsWith('plugins_disabled:traefik-b:')));
  t.false(diagnosis.findings.some((f) => f.id.startsWith('plugins_disabled:traefik:')));
  // the second one down: its resources unknown there, live overall (unknown ranks below live)
  await second.down();
  const down = await h.until(async () => {
    const value = await h.live(NEXTCLOUD.id);
    return value.instances[1]?.state === 'unknown' ? value : null;
  });
  t.is(down.state, 'live');
  t.true((await h.diagnosis()).findings.some((f) => f.id === 'traefik_unreachable:traefik-b:instance'));
  // removed: it leaves, and so do its findings
  const removed = await h.app.inject({ method: 'DELETE', url: '/api/datasource/traefik-b' });
  t.true([200, 204].includes(removed.statusCode), removed.body);
  await h.until(async () => (await h.live(NEXTCLOUD.id)).instances.length === 1);
  const after = await h.diagnosis();
  t.deepEqual(
    after.instances.map((i) => i.source),
    ['traefik'],
  );
  t.false(after.findings.some((f) => f.id.includes(':traefik-b:')));
});
