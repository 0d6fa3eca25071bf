/**
 * GET /api/proxy-config/diagnosis, the `live` and `diagnosis` events, paging, a flapping instance and
 * the check that does no work when nothing changed (API.md §4.19, §4.17), against a fake Traefik API.
 */
import test from 'ava';
import { GRAFANA, NEXTCLOUD, liveHarness } from './checker-support.ts';
import { waitFor } from '../helpers/wait.ts';

test('the diagnosis names a disabled router with a stable id across checks, and clears it when Traefik enables it', async (t) => {
  const h = await liveHarness(t);
  h.follow();
  await h.until(async () => (await h.live(NEXTCLOUD.id)).state === 'live');
  const clean = await h.diagnosis('?refresh=true');
  t.like(clean.instances[0], { source: 'traefik', reachable: true, version: '3.7.15', document: 'current' });
  t.truthy(clean.checked_at);
  t.false(clean.findings.some((f) => f.kind === 'router_disabled'));

  Object.assign(h.traefik.router(NEXTCLOUD.router), {
    status: 'disabled',
    error: ['middleware "nope@file" does not exist'],
  });
  const first = await h.until(async () => {
    const value = await h.diagnosis();
    return value.findings.find((f) => f.kind === 'router_disabled') ?? null;
  });
  t.true(first.resources.includes(NEXTCLOUD.id), JSON.stringify(first));
  t.is(first.severity, 'error');
  t.truthy(first.fix);
  // the same id in later checks (the reading changes elsewhere: another router's status)
  Object.assign(h.traefik.router(GRAFANA.router), { status: 'warning', error: ['something'] });
  const later = await h.until(async () => {
    const value = await h.diagnosis('?refresh=true');
    return (await h.live(GRAFANA.id)).state === 'warning' ? value : null;
  });
  t.true(later.findings.some((f) => f.id === first.id));
  // findings are sorted by severity, kind, id
  const rank = { error: 0, warning: 1, info: 2 };
  const keys = later.findings.map((f) => `${rank[f.severity]}|${f.kind}|${f.id}`);
  t.deepEqual(keys, [...keys].sort());

  Object.assign(h.traefik.router(NEXTCLOUD.router), { status: 'enabled', error: undefined });
  await h.until(async () => !(await h.diagnosis()).findings.some((f) => f.id === first.id));
});

test('live and diagnosis events follow a flapping instance (down, up, down) without duplicates', async (t) => {
  const h = await liveHarness(t, { interval_s: 1 });
  const client = await h.events();
  h.follow();
  await h.until(async () => (await h.live(NEXTCLOUD.id)).state === 'live');
  // the first check may run before the fake holds our document (missing): count from the live event on
  const anchor = await client.next(
    (e) => e.event === 'live' && JSON.parse(e.data).resource === NEXTCLOUD.id && e.data.includes('"state":"live"'),
  );
  const after = () => client.events.slice(client.events.indexOf(anchor));
  const parsed = (type: string) =>
    after()
      .filter((e) => e.event === type)
      .map((e) => JSON.parse(e.data));
  const nextcloud = () => parsed('live').filter((e) => e.resource === NEXTCLOUD.id);
  const unreachable = () => parsed('diagnosis').filter((e) => e.finding.kind === 'traefik_unreachable');
  t.deepEqual(unreachable(), []);

  for (let round = 1; round <= 2; round++) {
    await h.traefik.down();
    await waitFor(() => nextcloud().length === 2 * round, 10_000);
    await waitFor(() => unreachable().length === 2 * round - 1, 10_000);
    if (round === 2) break;
    await h.traefik.up();
    await waitFor(() => nextcloud().length === 3, 10_000);
    await waitFor(() => unreachable().length === 2, 10_000);
  }
  // a few more checks while down: no repeated event
  await h.until(() => true);
  await h.until(() => true);
  t.deepEqual(nextcloud(), [
    { resource: NEXTCLOUD.id, state: 'live', previous: nextcloud()[0].previous },
    { resource: NEXTCLOUD.id, state: 'unknown', previous: 'live' },
    { resource: NEXTCLOUD.id, state: 'live', previous: 'unknown' },
    { resource: NEXTCLOUD.id, state: 'unknown', previous: 'live' },
  ]);
  const actions = unreachable().map((e) => e.action);
  t.deepEqual(actions, ['raised', 'cleared', 'raised']);
  const ids = new Set(unreachable().map((e) => e.finding.id));
  t.is(ids.size, 1, 'the same finding id each time');
  t.like(unreachable()[0].finding, { severity: 'error', kind: 'traefik_unreachable' });
});

test('a Traefik that answers 500 or hangs leaves every resource unknown with the reason', async (t) => {
  const h = await liveHarness(t, { timeout_ms: 3000 });
  h.follow();
  await h.until(async () => (await h.live(NEXTCLOUD.id)).state === 'live');
  h.traefik.mode = '500';
  // the state and the 500 together: on a loaded machine a read may also time out (3 s) first
  const failed = await h.until(async () => {
    const value = await h.live(NEXTCLOUD.id);
    return /Traefik answered HTTP 500/.test(value.instances[0].errors[0] ?? '') ? value : null;
  });
  t.is(failed.state, 'unknown');
  h.traefik.mode = 'hang';
  const hung = await h.until(async () => {
    const value = await h.live(NEXTCLOUD.id);
    return /did not answer within 3000 ms/.test(value.instances[0].errors[0] ?? '') ? value : null;
  });
  t.is(hung.state, 'unknown');
  h.traefik.mode = 'ok';
  await h.until(async () => (await h.live(NEXTCLOUD.id)).state === 'live');
});

test('routers on several pages are all read', async (t) => {
  const h = await liveHarness(t);
  h.traefik.pageSize = 2;
  h.follow();
  t.true(h.traefik.lists.http.routers.length > 4);
  await h.until(async () => (await h.live(NEXTCLOUD.id)).state === 'live');
  const views = (await h.app.inject({ url: '/api/resources' })).json() as Array<{ id: string; live: any }>;
  for (const view of views) t.is(view.live.state, 'live', view.id);
  t.true(h.traefik.requests.some((r) => r.startsWith('/api/http/routers?') && r.includes('page=3')));
  t.is((await h.diagnosis()).instances[0].document, 'current');
});

test('a check with nothing changed reuses the previous results without comparing', async (t) => {
  const h = await liveHarness(t);
  h.follow();
  await h.until(async () => (await h.live(NEXTCLOUD.id)).state === 'live');
  await h.until(() => true);
  const { stats } = h.app.liveStatus;
  const compared = stats.compared;
  const checks = stats.checks;
  await waitFor(() => stats.checks >= checks + 3, 10_000);
  t.is(stats.compared, compared, 'three checks, no comparison');
  const before = await h.live(NEXTCLOUD.id);
  // one changed byte in Traefik's answers: compared again
  h.traefik.router(GRAFANA.router).status = 'warning';
  await h.until(async () => (await h.live(GRAFANA.id)).state === 'warning');
  t.true(stats.compared > compared);
  t.is((await h.live(NEXTCLOUD.id)).state, before.state);
});

test('before its first check a configured Traefik instance is listed with document unknown', async (t) => {
  // no check runs: the settle time and the interval are an hour and a day away
  const h = await liveHarness(t, { settle_s: 3600, interval_s: 86_400 });
  const before = await h.diagnosis();
  t.is(before.checked_at, null);
  t.deepEqual(before.instances, [
    { source: 'traefik', reachable: false, version: null, document: 'unknown', since: null },
  ]);
  h.follow();
  const after = await h.diagnosis('?refresh=true');
  t.like(after.instances[0], { source: 'traefik', reachable: true, document: 'current' });
});
