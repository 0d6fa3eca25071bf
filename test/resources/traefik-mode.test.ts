import test from 'ava';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { waitFor } from '../helpers/wait.ts';
import { call, createMiddleware, harness, NEXTCLOUD, resourceFiles, startTraefikWithRouters } from './support.ts';

const MAX_INT64 = '9223372036854775807';

test.serial(
  'Traefik mode discovers the traefik-api fixtures: internal and redirect routers left out, TLS "default" dropped',
  async (t) => {
    const { app, fake } = await harness(t, { active: 'traefik' });
    const started = await app.resources.started();
    t.log(`startup sync in Traefik mode (7 resources created): ${started.duration_ms} ms`);
    const list = (await call(app, { url: '/api/resources' })).body;
    t.deepEqual(
      list.map((x: any) => x.id),
      [
        NEXTCLOUD,
        '2-grafana-router',
        '3-5e2f283f21admin29-regex-wiki-router',
        '6-jellyfin-media-router',
        'api-router',
        'next-router',
        'ws-router',
      ],
    );
    t.true(list.every((x: any) => x.source === 'traefik' && x.status === 'active'));
    const byId = Object.fromEntries(list.map((x: any) => [x.id, x]));
    t.like(byId[NEXTCLOUD], {
      router: '1-Nextcloud-router@http',
      priority: 100,
      entrypoints: ['websecure'],
      host: 'cloud.example.com',
      tls: { cert_resolver: 'letsencrypt', domains: null, options: null },
      upstream_service: '1-Nextcloud-service',
    });
    t.deepEqual(byId[NEXTCLOUD].upstream_middlewares, ['crowdsec@file', 'badger@http']);
    t.like(byId['api-router'], { router: 'api-router@file', priority: 53, host: 'pangolin.example.com' });

    const snapshot = app.upstream.current();
    t.like(snapshot, { mode: 'traefik', source: 'traefik', body: null });
    const discovered = app.upstream.discoveredServices();
    t.false(discovered.some((s) => s.provider === 'internal'));
    t.true(discovered.some((s) => s.upstream_name === '4-SSH-service@http' && s.protocol === 'tcp'));
    t.true(app.resources.traefikRouters()!.some((r) => r.name === '1-Nextcloud-router@http'));
    t.like(app.upstream.lastSync('traefik'), { ok: true, routers: 15, empty_streak: 0 });
    t.true(fake.requests.some((r) => r.url.startsWith('/api/http/services')));

    // a steady Traefik writes nothing either
    const files = await resourceFiles(app.store.dataDir);
    t.like(await app.resources.syncNow(), { ok: true, changed: false, written: 0 });
    t.deepEqual(await resourceFiles(app.store.dataDir), files);
  },
);

test.serial(
  'Traefik mode: an override emits a router of our own, upstream references qualified with their provider',
  async (t) => {
    const { app } = await harness(t, { active: 'traefik' });
    await createMiddleware(t, app, {
      id: 'rate-limit',
      name: 'Rate limit',
      type: 'rateLimit',
      config: { average: 100, burst: 50 },
    });
    const r = await call(app, {
      method: 'POST',
      url: `/api/resources/${NEXTCLOUD}/middlewares`,
      payload: { middleware_id: 'rate-limit' },
    });
    t.is(r.status, 200);
    t.like(r.body, { emitted: true, effective_service: '1-Nextcloud-service@http' });
    t.deepEqual(r.body.effective_middlewares, ['rate-limit', 'crowdsec@file', 'badger@http']);
  },
);

test.serial(
  'Traefik mode: a MaxInt64 priority is exact in the API response and the file; our own routers are not discovered',
  async (t) => {
    const docker = [
      {
        name: 'big@docker',
        provider: 'docker',
        status: 'enabled',
        rule: 'Host(`big.example.com`)',
        entryPoints: ['websecure'],
        service: 'big',
        priority: MAX_INT64,
        priorityStr: MAX_INT64,
      },
      {
        name: 'web@docker',
        provider: 'docker',
        status: 'enabled',
        rule: 'Host(`web.example.com`)',
        entryPoints: ['websecure'],
        service: 'web',
        priority: 23,
        priorityStr: '23',
      },
    ];
    // JSON.stringify would round the big number: splice the digits in as text
    const text = (routers: object[]) =>
      JSON.stringify(routers).replaceAll(`"priority":"${MAX_INT64}"`, `"priority":${MAX_INT64}`);
    const traefik = await startTraefikWithRouters(t, text(docker));
    const { app, dataDir } = await harness(t, { active: 'traefik', traefikUrl: traefik.url });

    const r = await call(app, { url: '/api/resources/big' });
    t.is(r.status, 200);
    t.true(r.raw.includes(`"priority":${MAX_INT64},`), r.raw.slice(0, 200));
    t.is(app.resources.get('big')?.priority, BigInt(MAX_INT64));
    t.is(app.resourcesView.get('big')?.priority, MAX_INT64, 'third-party plugins get JSON-safe copies');
    t.true((await readFile(path.join(dataDir, 'resources', 'big.yaml'), 'utf8')).includes(`priority: "${MAX_INT64}"`));
    const list = await call(app, { url: '/api/resources' });
    t.true(list.raw.includes(`"priority":${MAX_INT64},`));
    t.like(await app.resources.syncNow(), { ok: true, written: 0 });

    // what Stack Manager emits comes back through Traefik's API as `<id>@http` and `sm_…@http`
    traefik.setRouters(
      text([
        ...docker,
        {
          name: 'web@http',
          provider: 'http',
          status: 'enabled',
          rule: 'Host(`web.example.com`)',
          entryPoints: ['websecure'],
          service: 'web@docker',
          priority: 24,
          priorityStr: '24',
        },
        {
          name: 'web_x@http',
          provider: 'http',
          status: 'enabled',
          rule: 'Host(`x.example.com`)',
          service: 'web@docker',
          priority: 1,
          priorityStr: '1',
        },
      ]),
    );
    t.like(await app.resources.syncNow(), { ok: true, written: 0 });
    t.deepEqual(
      (await call(app, { url: '/api/resources' })).body.map((x: any) => x.id),
      ['big', 'web'],
    );
  },
);

test.serial(
  'PUT /api/datasource/active switches discovery to Traefik: resources keep their ids and settings, their source follows',
  async (t) => {
    const { app } = await harness(t);
    await createMiddleware(t, app, {
      id: 'rate-limit',
      name: 'Rate limit',
      type: 'rateLimit',
      config: { average: 100, burst: 50 },
    });
    await call(app, {
      method: 'POST',
      url: `/api/resources/${NEXTCLOUD}/middlewares`,
      payload: { middleware_id: 'rate-limit' },
    });
    t.is((await call(app, { method: 'PUT', url: '/api/datasource/active', payload: { name: 'traefik' } })).status, 200);
    const nextcloud = await waitFor(async () => {
      const view = (await call(app, { url: `/api/resources/${NEXTCLOUD}` })).body;
      return view.source === 'traefik' ? view : null;
    }, 3000);
    t.deepEqual(nextcloud.middlewares, [{ id: 'rate-limit', priority: 100 }]);
    t.deepEqual(nextcloud.effective_middlewares, ['rate-limit', 'crowdsec@file', 'badger@http']);
    await waitFor(() => app.upstream.lastSync('traefik')?.ok, 2000);
    t.is(app.upstream.current()?.mode, 'traefik');
    t.true((await call(app, { url: '/api/resources' })).body.some((x: any) => x.id === 'api-router'));
  },
);
