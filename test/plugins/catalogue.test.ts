import test from 'ava';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { assertError, call, pluginsApp, startFakeCatalogue, STATIC_CONFIG } from './support.ts';

test('GET /api/plugins/catalogue lists middleware entries without readme, with isInstalled, q filter and paging', async (t) => {
  const catalogue = await startFakeCatalogue(t);
  const { app } = await pluginsApp(t, { text: STATIC_CONFIG, catalogueUrl: catalogue.url });
  const all = await call(app, { url: '/api/plugins/catalogue' });
  t.is(all.status, 200, JSON.stringify(all.body));
  t.is(all.headers['x-total-count'], '5');
  t.is(all.headers['x-catalogue-stale'], undefined);
  t.true(all.body.every((e: any) => e.type === 'middleware' && !('readme' in e)));
  const installed = Object.fromEntries(all.body.map((e: any) => [e.name, e.isInstalled]));
  t.deepEqual(installed, {
    'crowdsec-bouncer-traefik-plugin': true,
    mtlswhitelist: false,
    geoblock: false,
    badger: true,
    rewritebody: false,
  });
  t.like(all.body[0], {
    import: 'github.com/maxlerebourg/crowdsec-bouncer-traefik-plugin',
    latestVersion: 'v1.4.4',
    stars: 512,
  });

  const q = await call(app, { url: '/api/plugins/catalogue?q=GEOBLOCK' });
  t.deepEqual(
    q.body.map((e: any) => e.name),
    ['geoblock'],
  );
  const byImport = await call(app, { url: '/api/plugins/catalogue?q=github.com/fosrl' });
  t.deepEqual(
    byImport.body.map((e: any) => e.name),
    ['badger'],
  );

  const page = await call(app, { url: '/api/plugins/catalogue?page=2&page_size=2' });
  t.is(page.body.length, 2);
  t.is(page.headers['x-total-count'], '5');
  t.regex(String(page.headers.link), /rel="next"/);
  t.regex(String(page.headers.link), /rel="prev"/);
  assertError(t, await call(app, { url: '/api/plugins/catalogue?page_size=0' }), 422, 'validation_failed');
  assertError(t, await call(app, { url: '/api/plugins/catalogue?refresh=maybe' }), 422, 'validation_failed');
  // one fetch served every request (cache within ttl_s)
  t.is(catalogue.hits(), 1);
});

test('GET /api/plugins/catalogue caches on disk, serves the stale cache with X-Catalogue-Stale when the catalogue fails, refresh refetches', async (t) => {
  const catalogue = await startFakeCatalogue(t);
  const { app } = await pluginsApp(t, { text: STATIC_CONFIG, catalogueUrl: catalogue.url });
  t.is((await call(app, { url: '/api/plugins/catalogue' })).status, 200);
  const cacheFile = path.join(app.store.dataDir, '.cache', 'plugin-catalogue.json');
  const cached = JSON.parse(await readFile(cacheFile, 'utf8'));
  t.is(cached.entries.length, 5);

  t.is((await call(app, { url: '/api/plugins/catalogue?refresh=true' })).status, 200);
  t.is(catalogue.hits(), 2);
  catalogue.state.fault = '500';
  const stale = await call(app, { url: '/api/plugins/catalogue?refresh=1' });
  t.is(stale.status, 200);
  t.is(stale.headers['x-catalogue-stale'], 'true');
  t.is(stale.body.length, 5);
  catalogue.state.fault = 'malformed';
  t.is((await call(app, { url: '/api/plugins/catalogue?refresh=1' })).headers['x-catalogue-stale'], 'true');

  // the fake goes away: a new app on the same data dir reads the disk cache (ttl 0: always refresh)
  await catalogue.close();
  const next = await pluginsApp(t, {
    text: STATIC_CONFIG,
    catalogueUrl: catalogue.url,
    ttlS: 0,
    dataDir: app.store.dataDir,
  });
  await app.close();
  const fromDisk = await call(next.app, { url: '/api/plugins/catalogue' });
  t.is(fromDisk.status, 200, JSON.stringify(fromDisk.body));
  t.is(fromDisk.headers['x-catalogue-stale'], 'true');
  t.is(fromDisk.body.length, 5);
});

test('GET /api/plugins/catalogue answers 502 when unreachable and nothing is cached', async (t) => {
  const { app } = await pluginsApp(t, { text: STATIC_CONFIG });
  const body = assertError(t, await call(app, { url: '/api/plugins/catalogue' }), 502, 'upstream_unavailable');
  t.regex(body.message, /catalogue/);
  const catalogue = await startFakeCatalogue(t);
  catalogue.state.fault = 'object';
  const other = await pluginsApp(t, { text: STATIC_CONFIG, catalogueUrl: catalogue.url });
  assertError(t, await call(other.app, { url: '/api/plugins/catalogue' }), 502, 'upstream_unavailable');
});
