import test from 'ava';
import { createHash } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { build } from '../helpers/build.ts';
import { WAIT_DEADLINE_MS, waitFor } from '../helpers/wait.ts';
import {
  call,
  createMiddleware,
  GRAFANA,
  harness,
  JELLYFIN,
  NEXTCLOUD,
  PAPERLESS,
  resourceFiles,
  WIKI,
  writeSources,
} from './support.ts';

/** A file's ETag (API.md §2.5): the first 32 hex digits of the SHA-256 of its bytes. */
const fileEtag = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

test.serial(
  'discovers the Pangolin fixture: ids, hosts, priorities, entry points; redirect routers excluded',
  async (t) => {
    const { app } = await harness(t);
    const started = await app.resources.started();
    t.true(started.ok, String(started.error));
    t.log(`startup sync (4 resources created): ${started.duration_ms} ms`);

    const r = await call(app, { url: '/api/resources' });
    t.is(r.status, 200);
    t.is(r.headers['x-total-count'], '4');
    t.deepEqual(
      r.body.map((x: any) => x.id),
      [NEXTCLOUD, GRAFANA, WIKI, JELLYFIN],
    );
    const byId = Object.fromEntries(r.body.map((x: any) => [x.id, x]));
    t.like(byId[NEXTCLOUD], {
      name: '1-Nextcloud-router',
      router: '1-Nextcloud-router@http',
      source: 'pangolin',
      status: 'active',
      missing_since: null,
      host: 'cloud.example.com',
      hosts: ['cloud.example.com'],
      entrypoints: ['websecure'],
      priority: 100,
      upstream_service: '1-Nextcloud-service',
      upstream_middlewares: ['badger'],
      tls: { cert_resolver: 'letsencrypt', domains: null, options: null },
      middlewares: [],
      external_middlewares: [],
      service_id: null,
      emitted: false,
      effective_middlewares: [],
      effective_service: '1-Nextcloud-service',
    });
    t.like(byId[WIKI], { host: 'wiki.example.com', entrypoints: ['web'], priority: 112, tls: null });
    t.like(byId[JELLYFIN], { host: 'media.example.com', upstream_middlewares: ['badger', '6-headers-middleware'] });
    t.false(r.body.some((x: any) => x.id.endsWith('redirect')));
    // every config key present with its default
    t.deepEqual(Object.keys(byId[NEXTCLOUD].config).sort(), [
      'headers',
      'http',
      'mtls',
      'mtlswhitelist',
      'priority',
      'tcp',
      'tls',
    ]);
    t.deepEqual(byId[NEXTCLOUD].config.tcp, { enabled: false, entrypoints: ['tcp'], service_id: null, sni_rule: null });

    // one fetch fed the snapshot and the discovered services too
    const snapshot = app.upstream.current();
    t.is(snapshot?.mode, 'pangolin');
    t.is(snapshot?.source, 'pangolin');
    t.truthy((snapshot?.body as any).http.routers['1-Nextcloud-router-redirect']);
    t.true(app.upstream.discoveredServices().some((s) => s.upstream_name === '1-Nextcloud-service@http'));
    t.like(app.upstream.lastSync('pangolin'), { ok: true, error: null, routers: 7, empty_streak: 0 });

    const steady = await app.resources.syncNow();
    t.log(`steady sync (nothing to write): ${steady.duration_ms} ms`);
    t.true(steady.ok);
  },
);

test.serial(
  'a steady upstream writes nothing: files, mtimes, ETags and the cache stay the same across syncs',
  async (t) => {
    const { app, dataDir } = await harness(t);
    const cacheFile = path.join(dataDir, '.cache', 'upstream-pangolin.json');
    const before = await resourceFiles(dataDir);
    const cacheBefore = await readFile(cacheFile, 'utf8');
    const etags = (await call(app, { url: '/api/resources' })).body.map((x: any) => x.etag);
    for (let i = 0; i < 3; i++) {
      const report = await app.resources.syncNow();
      t.like(report, { ok: true, changed: false, written: 0 });
    }
    t.deepEqual(await resourceFiles(dataDir), before);
    t.is(await readFile(cacheFile, 'utf8'), cacheBefore);
    t.deepEqual(
      (await call(app, { url: '/api/resources' })).body.map((x: any) => x.etag),
      etags,
    );
  },
);

test.serial(
  'switching to the changed config creates 8-Paperless-ngx and disables 2-Grafana with settings kept; switching back restores it',
  async (t) => {
    const { app, fake } = await harness(t);
    await createMiddleware(t, app, {
      id: 'rate-limit',
      name: 'Rate limit',
      type: 'rateLimit',
      config: { average: 100, burst: 50 },
    });
    t.is(
      (
        await call(app, {
          method: 'POST',
          url: `/api/resources/${GRAFANA}/middlewares`,
          payload: { middleware_id: 'rate-limit', priority: 300 },
        })
      ).status,
      200,
    );
    t.is(
      (await call(app, { method: 'PUT', url: `/api/resources/${GRAFANA}/config/priority`, payload: { priority: 500 } }))
        .status,
      200,
    );

    fake.state.pangolinFile = 'traefik-config-changed.json';
    const report = await app.resources.syncNow();
    t.like(report, { ok: true, changed: true });
    const paperless = (await call(app, { url: `/api/resources/${PAPERLESS}` })).body;
    t.like(paperless, {
      status: 'active',
      host: 'paperless.example.com',
      router: '8-Paperless-ngx-router@http',
      entrypoints: ['websecure'],
    });
    const grafana = (await call(app, { url: `/api/resources/${GRAFANA}` })).body;
    t.is(grafana.status, 'disabled');
    t.truthy(grafana.missing_since);
    t.deepEqual(grafana.middlewares, [{ id: 'rate-limit', priority: 300 }]);
    t.is(grafana.config.priority.priority, 500);
    t.false(grafana.emitted);
    t.false(JSON.stringify(app.upstream.current()?.body).includes('2-Grafana-router'));

    // missing_since is kept while it stays missing
    await app.resources.syncNow();
    t.is((await call(app, { url: `/api/resources/${GRAFANA}` })).body.missing_since, grafana.missing_since);

    fake.state.pangolinFile = 'traefik-config.json';
    await app.resources.syncNow();
    const back = (await call(app, { url: `/api/resources/${GRAFANA}` })).body;
    t.like(back, { id: GRAFANA, status: 'active', missing_since: null, emitted: true });
    t.deepEqual(back.middlewares, [{ id: 'rate-limit', priority: 300 }]);
    t.is(back.config.priority.priority, 500);
    t.deepEqual(back.effective_middlewares, ['rate-limit', 'badger']);
    t.is((await call(app, { url: `/api/resources/${PAPERLESS}` })).body.status, 'disabled');
  },
);

test.serial(
  'an empty answer after a non-empty one changes nothing until it is confirmed N times (resources and snapshot)',
  async (t) => {
    const { app, fake, dataDir } = await harness(t, {
      config: { discovery: { empty_confirmations: 3, exclude: ['*-redirect'] } },
    });
    const files = await resourceFiles(dataDir);
    const hash = app.upstream.current()?.hash;
    fake.state.pangolinFile = 'traefik-config-empty.json';
    for (const streak of [1, 2]) {
      const report = await app.resources.syncNow();
      t.like(report, { ok: true, changed: false, routers: 0 });
      t.like(app.upstream.lastSync('pangolin'), { ok: true, routers: 0, empty_streak: streak });
      t.deepEqual(await resourceFiles(dataDir), files);
      t.is(app.upstream.current()?.hash, hash, 'the empty body is not published yet');
    }
    const third = await app.resources.syncNow();
    t.like(third, { ok: true, changed: true });
    t.is(app.upstream.lastSync('pangolin')?.empty_streak, 3);
    const list = (await call(app, { url: '/api/resources?status=disabled' })).body;
    t.is(list.length, 4);
    t.true(list.every((x: any) => x.missing_since !== null));
    t.deepEqual(app.upstream.current()?.body, {});

    // a non-empty answer resets the streak and brings them back
    fake.state.pangolinFile = 'traefik-config.json';
    await app.resources.syncNow();
    t.is(app.upstream.lastSync('pangolin')?.empty_streak, 0);
    t.is((await call(app, { url: '/api/resources?status=active' })).body.length, 4);
  },
);

for (const [fault, pattern] of [
  ['500', /HTTP 500/],
  ['timeout', /timeout/],
  ['malformed', /invalid JSON/],
  ['reset', /closed the connection|unreachable/],
] as const) {
  test.serial(`a failed fetch (${fault}) changes nothing and is reported in last_sync`, async (t) => {
    const { app, fake, dataDir } = await harness(t, { timeoutMs: 300 });
    const files = await resourceFiles(dataDir);
    const snapshot = app.upstream.current();
    const services = app.upstream.discoveredServices();
    fake.state.fault = fault;
    const report = await app.resources.syncNow();
    t.false(report.ok);
    t.regex(report.error ?? '', pattern);
    const last = app.upstream.lastSync('pangolin');
    t.like(last, { ok: false, routers: null, empty_streak: 0 });
    t.regex(last?.error ?? '', pattern);
    t.true(app.upstream.stale);
    t.is(app.upstream.current(), snapshot);
    t.is(app.upstream.discoveredServices(), services);
    t.deepEqual(await resourceFiles(dataDir), files);
    t.is((await call(app, { url: '/api/resources?status=active' })).body.length, 4);

    fake.state.fault = null;
    t.true((await app.resources.syncNow()).ok);
    t.false(app.upstream.stale);
  });
}

test.serial(
  'the last good Pangolin body is cached and reloaded at startup, stale until the first fetch succeeds',
  async (t) => {
    const first = await harness(t);
    const { dataDir, fake } = first;
    const cached = JSON.parse(await readFile(path.join(dataDir, '.cache', 'upstream-pangolin.json'), 'utf8'));
    t.truthy(cached.http.routers['1-Nextcloud-router']);
    await first.app.close();

    // a second instance on the same data dir while the upstream is down
    fake.state.fault = '502';
    const app = await build(t, { dataDir, config: { auth: { mode: 'off' }, templates: { seed: false } } });
    const report = await app.resources.started();
    t.false(report.ok);
    t.true(app.upstream.stale);
    const snapshot = app.upstream.current();
    t.is(snapshot?.source, 'pangolin');
    t.deepEqual(Object.keys((snapshot?.body as any).http.routers), Object.keys(cached.http.routers));
    t.true(app.upstream.discoveredServices().length > 0);
    t.is((await call(app, { url: '/api/resources?status=active' })).body.length, 4);

    fake.state.fault = null;
    t.true((await app.resources.syncNow()).ok);
    t.false(app.upstream.stale);
  },
);

test.serial('the poller syncs every poll_interval_s and app.upstream.requestSync runs a forced sync', async (t) => {
  const { app, fake } = await harness(t, { pollIntervalS: 1 });
  const count = () => fake.requests.filter((r) => r.url.startsWith('/api/v1/traefik-config')).length;
  const before = count();
  await waitFor(() => count() > before, 3000);
  const outcome = await app.upstream.requestSync('forced');
  t.deepEqual(outcome, { ok: true, error: null, changed: false });
});

test.serial(
  'a hand edit of override fields is picked up within 1 s; discovered fields in the file are ignored and put back at once',
  async (t) => {
    const { app, dataDir } = await harness(t);
    await createMiddleware(t, app, {
      id: 'rate-limit',
      name: 'Rate limit',
      type: 'rateLimit',
      config: { average: 100, burst: 50 },
    });
    const file = path.join(dataDir, 'resources', `${NEXTCLOUD}.yaml`);
    const text = await readFile(file, 'utf8');
    const edited = text
      .replace('host: cloud.example.com', 'host: evil.example.com')
      .replace('rule: Host(`cloud.example.com`)', 'rule: Host(`evil.example.com`)')
      .replace('middlewares: []', 'middlewares:\n  - id: rate-limit\n    priority: 250')
      .replace(/service_id: null\nconfig:/, 'service_id: null\nconfig:');
    t.not(edited, text);
    const started = Date.now();
    await writeFile(file, `# my note\n${edited}`);
    const view = await waitFor(async () => {
      const r = await call(app, { url: `/api/resources/${NEXTCLOUD}` });
      return r.body.middlewares.length > 0 ? r.body : null;
    }, 1000);
    t.log(`hand edit visible after ${Date.now() - started} ms`);
    t.deepEqual(view.middlewares, [{ id: 'rate-limit', priority: 250 }]);
    t.is(view.host, 'cloud.example.com');
    t.is(view.rule, 'Host(`cloud.example.com`)');
    t.deepEqual(view.effective_middlewares, ['rate-limit', 'badger']);

    // the drifted file made the server sync at once: the upstream's values are back in the file,
    // the overrides and comments of the edit kept, and the ETag is the file's again
    const after = await waitFor(async () => {
      const now = await readFile(file, 'utf8');
      return now.includes('host: cloud.example.com') ? now : null;
    }, WAIT_DEADLINE_MS);
    t.log(`discovered fields back in the file after ${Date.now() - started} ms`);
    t.true(after.startsWith('# my note'), 'comments survive the rewrite');
    t.true(after.includes('rule: Host(`cloud.example.com`)'));
    t.true(after.includes('id: rate-limit'));
    const final = await call(app, { url: `/api/resources/${NEXTCLOUD}` });
    t.is(final.headers.etag, `"${fileEtag(after)}"`);
    t.is((await app.resources.syncNow()).written, 0);
  },
);

test.serial(
  'upstream down: a hand edit of discovered fields is answered with the last upstream values under an ETag of its own',
  async (t) => {
    const { app, dataDir, fake } = await harness(t);
    const file = path.join(dataDir, 'resources', `${NEXTCLOUD}.yaml`);
    const url = `/api/resources/${NEXTCLOUD}`;
    const before = await call(app, { url });
    fake.state.fault = '502';
    const edited = (await readFile(file, 'utf8'))
      .replace('status: active', 'status: disabled')
      .replaceAll('cloud.example.com', 'evil.example.com');
    // written as an editor that saves by rename does: a busy machine can otherwise show the watcher
    // the truncated file first, and the answer's ETag then changes twice (CI: 412 on the If-Match)
    await writeFile(`${file}.edit.tmp`, edited);
    await rename(`${file}.edit.tmp`, file);
    const drifted = await waitFor(async () => {
      const r = await call(app, { url });
      return r.headers.etag !== before.headers.etag ? r : null;
    }, WAIT_DEADLINE_MS);
    // the file is not what is answered: the ETag is neither the file's nor the one of the old file
    t.like(drifted.body, { host: 'cloud.example.com', status: 'active' });
    t.not(drifted.headers.etag, `"${fileEtag(edited)}"`);
    t.is(await readFile(file, 'utf8'), edited, 'the sync failed: nothing put back yet');
    // a hand-disabled resource is still active: DELETE refused, and If-Match takes the answered ETag
    const refused = await call(app, { method: 'DELETE', url, headers: { 'if-match': String(drifted.headers.etag) } });
    t.is(refused.status, 409);
    t.is(refused.body.id, 'resource_active');
    const stale = await call(app, {
      method: 'PUT',
      url: `${url}/config/priority`,
      headers: { 'if-match': `"${fileEtag(edited)}"` },
      payload: { priority: 300 },
    });
    t.is(stale.status, 412, 'the bare file ETag names an answer never given');
    const put = await call(app, {
      method: 'PUT',
      url: `${url}/config/priority`,
      headers: { 'if-match': String(drifted.headers.etag) },
      payload: { priority: 300 },
    });
    t.is(put.status, 200, JSON.stringify(put.body));
    t.like(put.body, { host: 'cloud.example.com', status: 'active', config: { priority: { priority: 300 } } });
    // a write composes the trusted fields: the file holds them again, and its ETag is answered
    const written = await readFile(file, 'utf8');
    t.true(written.includes('host: cloud.example.com'));
    t.is(put.headers.etag, `"${fileEtag(written)}"`);
  },
);

test.serial('an invalid hand edit keeps the last good version', async (t) => {
  const { app, dataDir } = await harness(t);
  const file = path.join(dataDir, 'resources', `${NEXTCLOUD}.yaml`);
  await writeFile(
    file,
    (await readFile(file, 'utf8')).replace('middlewares: []', 'middlewares: [{id: "Not A Slug", priority: 5}]'),
  );
  await waitFor(() => app.store.invalidFiles().some((f) => f.path === file), 2000);
  const view = (await call(app, { url: `/api/resources/${NEXTCLOUD}` })).body;
  t.deepEqual(view.middlewares, []);
  t.is(view.status, 'active');
});

test.serial(
  'a file with overrides only, written before the first sync, is linked to the router of the same slug',
  async (t) => {
    const fakeHarness = await harness(t);
    const { fake, dataDir } = fakeHarness;
    await fakeHarness.app.close();
    const dir = path.join(path.dirname(dataDir), 'fresh');
    const { mkdir, writeFile } = await import('node:fs/promises');
    await mkdir(path.join(dir, 'resources'), { recursive: true });
    await writeSources(dir, fake);
    await writeFile(
      path.join(dir, 'resources', `${NEXTCLOUD}.yaml`),
      'external_middlewares: [{name: crowdsec@file, priority: 150}]\nconfig:\n  priority: {priority: 500}\n',
    );
    const app = await build(t, { dataDir: dir, config: { auth: { mode: 'off' }, templates: { seed: false } } });
    await app.resources.started();
    const list = (await call(app, { url: '/api/resources' })).body;
    t.deepEqual(
      list.map((x: any) => x.id),
      [NEXTCLOUD, GRAFANA, WIKI, JELLYFIN],
    );
    t.like(list[0], { router: '1-Nextcloud-router@http', status: 'active', host: 'cloud.example.com', emitted: true });
    t.deepEqual(list[0].external_middlewares, [{ name: 'crowdsec@file', priority: 150, provider: null }]);
    t.deepEqual(list[0].effective_middlewares, ['crowdsec@file', 'badger']);
  },
);
