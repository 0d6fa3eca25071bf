/**
 * Every §4.19 finding kind through the checker and GET /api/proxy-config/diagnosis against the fake
 * Traefik API (the kinds the other checker tests do not raise: version_unknown, plugins_disabled,
 * middleware_error, service_no_servers, entrypoint_missing, priority_tie, keys_dropped), each with
 * its id, subject, resources and fix, raised and cleared as `diagnosis` events.
 */
import test from 'ava';
import { GRAFANA, NEXTCLOUD, liveHarness, type LiveHarness } from './checker-support.ts';
import { waitFor } from '../helpers/wait.ts';
import type { Finding } from '../../model/live/types.ts';

const REDIRECT = '1-Nextcloud-router-redirect@http';

/** The fake instance gets the entry points of the fixture's TCP/UDP routers (tcp-2222, udp-19132 …). */
function withEntryPoints(h: LiveHarness): void {
  const served = h.app.proxyConfig.current()!.served as Record<string, any>;
  for (const protocol of ['http', 'tcp', 'udp'])
    for (const router of Object.values<any>(served[protocol]?.routers ?? {}))
      for (const name of router.entryPoints ?? [])
        if (!h.traefik.lists.entrypoints.some((e) => e.name === name))
          h.traefik.lists.entrypoints.push({ name, address: ':0' });
}

test('each finding of a Traefik instance is raised with its subject and fix, and cleared when Traefik is healthy', async (t) => {
  const h = await liveHarness(t);
  const client = await h.events();
  withEntryPoints(h);
  h.follow();
  await h.until(async () => (await h.live(NEXTCLOUD.id)).state === 'live');
  const healthy = await h.diagnosis('?refresh=true');
  t.deepEqual(healthy.findings, [], JSON.stringify(healthy.findings));

  // what Traefik reports on a bad day, all in one reading
  h.traefik.version.Version = ''; // a build that reports no version
  const badger = h.traefik.lists.http.middlewares.find((m) => m.name === 'badger@http')!;
  Object.assign(badger, { status: 'disabled', error: ['plugin: unknown plugin type: badger'] });
  const headers = h.traefik.lists.http.middlewares.find((m) => m.name === '6-headers-middleware@http')!;
  Object.assign(headers, { status: 'disabled', error: ['headers: invalid header name'] });
  const service = h.traefik.lists.http.services.find((s) => s.name === '2-Grafana-service@http')!;
  const url = Object.keys(service.serverStatus)[0];
  Object.assign(service, { usedBy: [GRAFANA.router], serverStatus: { [url]: 'DOWN' } });
  h.traefik.lists.entrypoints = h.traefik.lists.entrypoints.filter((e) => e.name !== 'web');
  const nextcloud = h.traefik.router(NEXTCLOUD.router);
  h.traefik.lists.http.routers.push({
    ...nextcloud,
    name: 'cloud@docker',
    provider: 'docker',
    service: 'cloud@docker',
    middlewares: undefined,
  });

  const findings = await h.until(async () => {
    const value = await h.diagnosis();
    return value.findings.length >= 6 ? value.findings : null;
  });
  const byKind = new Map<string, Finding[]>();
  for (const finding of findings) byKind.set(finding.kind, [...(byKind.get(finding.kind) ?? []), finding]);
  t.log(findings.map((f) => `${f.id}: ${f.message} | fix: ${f.fix}`).join('\n'));
  for (const finding of findings) t.true(finding.fix.length > 0, finding.id);

  t.like(byKind.get('version_unknown'), [{ id: 'version_unknown:traefik:instance', severity: 'warning' }]);
  t.like(byKind.get('plugins_disabled'), [
    { id: 'plugins_disabled:traefik:instance', severity: 'error', middlewares: ['badger@http'] },
  ]);
  const plugins = byKind.get('plugins_disabled')![0];
  t.true(plugins.resources.includes(NEXTCLOUD.id) && plugins.resources.includes(GRAFANA.id), plugins.resources.join());
  t.regex(plugins.fix, /POST \/api\/plugins\/badger\/vendor/);
  t.like(byKind.get('middleware_error'), [
    { id: 'middleware_error:traefik:6-headers-middleware@http', middlewares: ['6-headers-middleware@http'] },
  ]);
  t.regex(byKind.get('middleware_error')![0].message, /headers: invalid header name/);
  t.like(byKind.get('service_no_servers'), [{ id: 'service_no_servers:traefik:2-Grafana-service@http' }]);
  t.deepEqual(byKind.get('service_no_servers')![0].resources, [GRAFANA.id]);
  t.like(byKind.get('entrypoint_missing'), [{ id: 'entrypoint_missing:traefik:web' }]);
  // the resources whose router or Pangolin's redirect companion of it uses the entry point
  t.deepEqual(byKind.get('entrypoint_missing')![0].resources, [
    NEXTCLOUD.id,
    GRAFANA.id,
    '3-5e2f283f21admin29-regex-wiki-router',
    '6-jellyfin-media-router',
  ]);
  t.regex(byKind.get('entrypoint_missing')![0].message, new RegExp(REDIRECT));
  const tie = byKind.get('priority_tie')!;
  t.is(tie.length, 1, JSON.stringify(tie));
  t.deepEqual(tie[0].resources, [NEXTCLOUD.id]);
  t.regex(tie[0].message, /cloud@docker/);
  t.false(byKind.has('router_disabled'), 'nothing unexplained');

  // each was raised once as a diagnosis event
  const events = () =>
    client.events
      .filter((e) => e.event === 'diagnosis')
      .map((e) => JSON.parse(e.data) as { finding: Finding; action: string });
  await waitFor(() => findings.every((f) => events().some((e) => e.finding.id === f.id)), 5_000);
  for (const finding of findings)
    t.deepEqual(
      events()
        .filter((e) => e.finding.id === finding.id)
        .map((e) => e.action),
      ['raised'],
      finding.id,
    );

  // Traefik healthy again: every finding cleared, once
  h.traefik.version.Version = '3.7.15';
  h.traefik.lists.entrypoints.push({ name: 'web', address: ':0' });
  h.follow();
  await h.until(async () => (await h.diagnosis()).findings.length === 0);
  await waitFor(
    () => findings.every((f) => events().filter((e) => e.finding.id === f.id && e.action === 'cleared').length === 1),
    5_000,
  );
});

test('keys the instance cannot decode are dropped and named by one keys_dropped finding each', async (t) => {
  const h = await liveHarness(t);
  h.traefik.version.Version = '3.5.3';
  withEntryPoints(h);
  h.follow();
  const started = Date.now();
  // the version gate reads /api/version at start, every 30 s and on invalidate (through the explorer's
  // 1 s cache: the answer read at start may still be cached)
  await waitFor(
    async () => {
      t.is((await h.app.inject({ method: 'POST', url: '/api/proxy-config/invalidate' })).statusCode, 200);
      const status = (await h.app.inject({ url: '/api/proxy-config/status' })).json();
      return status.traefik_version?.version === '3.5.3' || null;
    },
    2_000,
    200,
  );
  t.log(`version read ${Date.now() - started} ms`);
  const created = await h.app.inject({
    method: 'POST',
    url: '/api/services',
    payload: {
      id: 'passive',
      name: 'Passive',
      type: 'loadBalancer',
      config: { servers: [{ url: 'http://10.0.0.9:80' }], passiveHealthCheck: { maxFailedAttempts: 3 } },
    },
  });
  t.is(created.statusCode, 201, created.body);
  const dropped = await waitFor(async () => {
    const value = await h.diagnosis();
    return value.findings.find((f) => f.kind === 'keys_dropped') ?? null;
  }, 5_000);
  t.log(`${dropped.id} ${Date.now() - started} ms: ${dropped.message} | fix: ${dropped.fix}`);
  t.is(dropped.severity, 'warning');
  t.regex(dropped.message, /passiveHealthCheck/);
  t.regex(dropped.message, /3\.6\.0/);
  t.true(dropped.fix.length > 0);
  const status = (await h.app.inject({ url: '/api/proxy-config/status' })).json();
  t.deepEqual(status.dropped_keys, [
    { path: '/http/services/passive/loadBalancer', key: 'passiveHealthCheck', min_version: '3.6.0' },
  ]);
  // the key gone: so is the finding
  const removed = await h.app.inject({ method: 'DELETE', url: '/api/services/passive' });
  t.is(removed.statusCode, 204, removed.body);
  await waitFor(async () => !(await h.diagnosis()).findings.some((f) => f.id === dropped.id) || null, 5_000);
});
