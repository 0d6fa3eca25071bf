/** What a target's document holds and how it is served: selection, pruning, renames, extra middlewares, ETags, schema. */
import test from 'ava';
import { rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { waitFor } from '../helpers/wait.ts';
import { openSse } from '../events/sse-client.ts';
import { parseLossless } from '../../model/lossless-json.ts';
import { JELLYFIN, NEXTCLOUD, WIKI } from '../resources/support.ts';
import { routersOf, targetHarness, validateTraefik, type TargetHarness } from './targets-support.ts';

const authelia = {
  id: 'authelia',
  name: 'Authelia',
  type: 'forwardAuth',
  config: { address: 'http://authelia:9091/api/authz/forward-auth' },
};

async function createTarget(t: { is: (a: unknown, b: unknown, m?: string) => void }, h: TargetHarness, body: object) {
  const res = await h.call('POST', '/api/proxy-config/targets', body);
  t.is(res.status, 201, res.text);
  return res.json.id as string;
}

/** The target's document once it exists (built on the turn after the write). */
async function documentOf(h: TargetHarness, id: string, query = '') {
  return waitFor(async () => {
    const res = await h.call('GET', `/api/v1/proxy-config/${id}${query}`);
    return res.status === 200 ? res : null;
  }, 200);
}

/** The document at `url` once its gzip form is ready (it is compressed on the thread pool after a generation). */
async function gzipped(h: TargetHarness, url: string, notEtag?: string) {
  return waitFor(async () => {
    const res = await h.call('GET', url, undefined, { 'accept-encoding': 'gzip' });
    return res.headers['content-encoding'] === 'gzip' && res.headers.etag !== notEtag ? res : null;
  }, 100);
}

/** Waits until the target's document differs from `etag` and returns it. */
async function changedDocument(h: TargetHarness, id: string, etag: string) {
  return waitFor(async () => {
    const res = await h.call('GET', `/api/v1/proxy-config/${id}`);
    return res.status === 200 && res.headers.etag !== etag ? res : null;
  }, 200);
}

test('without a target the default document is byte for byte what it was before targets existed', async (t) => {
  const h = await targetHarness(t);
  const before = await gzipped(h, '/api/v1/proxy-config');
  const beforeYaml = await h.call('GET', '/api/proxy-config?format=yaml');
  await h.call('POST', '/api/middlewares', authelia);
  const afterMiddleware = await gzipped(h, '/api/v1/proxy-config', before.headers.etag as string);
  await createTarget(t, h, { name: 'Edge', include: { hosts: ['cloud.example.com'] }, middlewares: ['authelia'] });
  await createTarget(t, h, { name: 'Other', entrypoints: { web: 'http' } });
  await documentOf(h, 'edge');
  await documentOf(h, 'other');
  const after = await gzipped(h, '/api/v1/proxy-config');
  t.is(after.headers.etag, afterMiddleware.headers.etag);
  t.true(after.bytes.equals(afterMiddleware.bytes), 'same bytes (gzip included) once targets exist');
  t.not(before.headers.etag, afterMiddleware.headers.etag, 'the middleware changed it (G4), not the targets');
  const afterYaml = await h.call('GET', '/api/proxy-config?format=yaml');
  t.true(parseYaml(afterYaml.text).http.middlewares.authelia !== undefined);
  t.is(parseYaml(beforeYaml.text).http.middlewares.authelia, undefined);
});

test('include by host glob keeps those routers with the services and middlewares they use; what only left-out routers used goes', async (t) => {
  const h = await targetHarness(t);
  const full = parseLossless((await h.call('GET', '/api/v1/proxy-config')).text) as any;
  await createTarget(t, h, { name: 'Cloud', include: { hosts: ['cloud.example.com', 'grafana.*.com'] } });
  const res = await documentOf(h, 'cloud');
  const doc = parseLossless(res.text) as any;
  t.deepEqual(routersOf(doc), [
    '1-Nextcloud-router',
    '1-Nextcloud-router-redirect',
    '2-Grafana-router',
    '2-Grafana-router-redirect',
  ]);
  t.deepEqual(routersOf(doc, 'tcp'), [], 'HostSNI(`*`) routers have no host name: a host glob never selects them');
  t.deepEqual(routersOf(doc, 'udp'), []);
  t.deepEqual(Object.keys(doc.http.services).sort(), ['1-Nextcloud-service', '2-Grafana-service']);
  t.deepEqual(Object.keys(doc.tcp.services), [], 'services only left-out routers used are left out');
  t.false('6-headers-middleware' in doc.http.middlewares, 'used only by Jellyfin');
  t.true('badger' in doc.http.middlewares && 'redirect-to-https' in doc.http.middlewares);
  t.true('bg-ratelimit' in doc.http.middlewares, 'a middleware no router uses stays (other providers may use it)');
  t.deepEqual(doc.http.routers['1-Nextcloud-router'], full.http.routers['1-Nextcloud-router']);
  t.true(validateTraefik(JSON.parse(res.text)), JSON.stringify(validateTraefik.errors));

  // `*` is one label, `**` any number of them
  await createTarget(t, h, { name: 'One label', include: { hosts: ['*.com'] } });
  t.deepEqual(routersOf((await documentOf(h, 'one-label')).json), []);
  await createTarget(t, h, { name: 'Any depth', include: { hosts: ['**.COM'] } });
  t.deepEqual(routersOf((await documentOf(h, 'any-depth')).json), routersOf(full));
});

test('exclude by resource id and include by resource id select the resource routers (with the Pangolin redirect companion)', async (t) => {
  const h = await targetHarness(t);
  const full = parseLossless((await h.call('GET', '/api/v1/proxy-config')).text) as any;
  await createTarget(t, h, { name: 'No media', exclude: { resources: [JELLYFIN] } });
  const noMedia = parseLossless((await documentOf(h, 'no-media')).text) as any;
  t.deepEqual(
    routersOf(noMedia),
    routersOf(full).filter((r) => !r.startsWith('6-Jellyfin')),
  );
  t.deepEqual(routersOf(noMedia, 'tcp'), routersOf(full, 'tcp'), 'no include: every other router, TCP too');
  t.false('6-Jellyfin-Media-service' in noMedia.http.services);
  t.false('6-headers-middleware' in noMedia.http.middlewares);
  t.true(validateTraefik(JSON.parse(JSON.stringify(noMedia, (_k, v) => (typeof v === 'bigint' ? Number(v) : v)))));

  await createTarget(t, h, {
    name: 'Wiki only',
    include: { resources: [WIKI] },
    exclude: { hosts: ['nothing.example'] },
  });
  const wiki = parseLossless((await documentOf(h, 'wiki-only')).text) as any;
  t.deepEqual(routersOf(wiki), ['3-5e2f283f21admin29-regex-Wiki-router']);
  t.deepEqual(Object.keys(wiki.http.services), ['3-5e2f283f21admin29-regex-Wiki-service']);

  await createTarget(t, h, {
    name: 'Both',
    include: { hosts: ['**.example.com'] },
    exclude: { hosts: ['media.*.com'] },
  });
  const both = parseLossless((await documentOf(h, 'both')).text) as any;
  t.deepEqual(routersOf(both), routersOf(noMedia), 'exclude wins over include');
});

test('entry points are renamed and the target middlewares appended to every HTTP router; a missing one is reported, not emitted', async (t) => {
  const h = await targetHarness(t);
  t.is((await h.call('POST', '/api/middlewares', authelia)).status, 201);
  const full = parseLossless((await h.call('GET', '/api/v1/proxy-config')).text) as any;
  await createTarget(t, h, {
    name: 'Edge',
    entrypoints: { websecure: 'https', web: 'http', 'tcp-2222': 'ssh' },
    middlewares: ['authelia'],
  });
  const res = await documentOf(h, 'edge');
  const doc = parseLossless(res.text) as any;
  t.true(validateTraefik(JSON.parse(res.text)), JSON.stringify(validateTraefik.errors));
  t.deepEqual(doc.http.routers['1-Nextcloud-router'].entryPoints, ['https']);
  t.deepEqual(doc.http.routers['1-Nextcloud-router-redirect'].entryPoints, ['http']);
  t.deepEqual(doc.tcp.routers['4-SSH-router'].entryPoints, ['ssh']);
  for (const [name, router] of Object.entries<any>(doc.http.routers)) {
    t.deepEqual(router.middlewares, [...(full.http.routers[name].middlewares ?? []), 'authelia'], name);
  }
  t.false('middlewares' in doc.tcp.routers['4-SSH-router'], 'TCP routers get no HTTP middlewares');
  t.deepEqual(full.http.routers['1-Nextcloud-router'].entryPoints, ['websecure'], 'the default document is untouched');

  // a hand edit may name a middleware that does not exist: reported in the status, not emitted
  // saved by rename, as editors do: a busy machine cannot show the watcher a half-written file
  const edge = path.join(h.dataDir, 'targets', 'edge.yaml');
  await writeFile(
    `${edge}.edit.tmp`,
    'name: Edge\nmiddlewares: [authelia, ghost]\nexclude:\n  resources: [gone-resource]\n',
  );
  await rename(`${edge}.edit.tmp`, edge);
  const status = await waitFor(async () => {
    const s = await h.call('GET', '/api/proxy-config/status');
    return s.json.dangling_references.some((d: { ref: string }) => d.ref === '/api/middlewares/ghost') ? s : null;
  }, 500);
  t.deepEqual(
    status.json.dangling_references.filter((d: { from: string }) => d.from === '/api/proxy-config/targets/edge'),
    [
      { from: '/api/proxy-config/targets/edge', ref: '/api/resources/gone-resource' },
      { from: '/api/proxy-config/targets/edge', ref: '/api/middlewares/ghost' },
    ],
  );
  t.is(status.json.status, 'degraded');
  const edited = parseLossless((await h.call('GET', '/api/v1/proxy-config/edge')).text) as any;
  t.deepEqual(edited.http.routers['2-Grafana-router'].middlewares, ['badger', 'authelia']);

  // the middleware file removed by hand: the same target version stops appending it
  await rm(path.join(h.dataDir, 'middlewares', 'authelia.yaml'));
  const without = await waitFor(async () => {
    const doc = parseLossless((await h.call('GET', '/api/v1/proxy-config/edge')).text) as any;
    return doc.http.routers['2-Grafana-router'].middlewares.length === 1 ? doc : null;
  }, 500);
  t.deepEqual(without.http.routers['2-Grafana-router'].middlewares, ['badger']);
  t.true(
    (await h.call('GET', '/api/proxy-config/status')).json.dangling_references.some(
      (d: { from: string; ref: string }) =>
        d.from === '/api/proxy-config/targets/edge' && d.ref === '/api/middlewares/authelia',
    ),
  );
});

test('a target document has its own ETag, 304 on If-None-Match, gzip and YAML negotiated, at both URLs; unknown targets 404', async (t) => {
  const h = await targetHarness(t);
  await createTarget(t, h, { name: 'Edge', exclude: { resources: [JELLYFIN] } });
  const plain = await documentOf(h, 'edge');
  const byQuery = await h.call('GET', '/api/v1/proxy-config?target=edge');
  const other = await h.call('GET', '/api/v1/traefik-config/edge');
  const def = await h.call('GET', '/api/v1/proxy-config');
  t.regex(plain.headers.etag as string, /^"[0-9a-f]+"$/);
  t.not(plain.headers.etag, def.headers.etag);
  t.is(byQuery.headers.etag, plain.headers.etag);
  t.is(other.headers.etag, plain.headers.etag);
  t.true(byQuery.bytes.equals(plain.bytes));
  t.is(plain.headers['content-type'], 'application/json; charset=utf-8');
  t.is(plain.headers['content-encoding'], undefined);
  t.is(plain.headers['cache-control'], 'no-cache');

  const notModified = await h.call('GET', '/api/v1/proxy-config/edge', undefined, {
    'if-none-match': plain.headers.etag as string,
  });
  t.is(notModified.status, 304);
  t.is(notModified.bytes.length, 0);
  const defaultTag = await h.call('GET', '/api/v1/proxy-config/edge', undefined, {
    'if-none-match': def.headers.etag as string,
  });
  t.is(defaultTag.status, 200, "the default document's ETag is not this target's");

  const gzipped = await waitFor(async () => {
    const res = await h.call('GET', '/api/v1/proxy-config/edge', undefined, { 'accept-encoding': 'gzip' });
    return res.headers['content-encoding'] === 'gzip' ? res : null;
  }, 100);
  t.is(gzipped.text, plain.text);
  t.is(gzipped.headers.etag, plain.headers.etag);
  const yaml = await h.call('GET', '/api/v1/proxy-config/edge', undefined, { accept: 'application/yaml' });
  t.is(yaml.headers['content-type'], 'application/yaml; charset=utf-8');
  t.deepEqual(routersOf(parseYaml(yaml.text)), routersOf(plain.json));
  t.not(yaml.headers.etag, plain.headers.etag);

  for (const url of ['/api/v1/proxy-config/nope', '/api/v1/proxy-config?target=nope', '/api/proxy-config/NOPE']) {
    const missing = await h.call('GET', url);
    t.is(missing.status, 404, url);
    t.deepEqual(Object.keys(missing.json).sort(), ['id', 'message'], url);
  }

  // a change of the target gives new bytes, a new ETag and a `provider` event naming the target
  const sse = await openSse(`${h.base}/api/events`);
  t.teardown(() => sse.close());
  t.is(sse.status, 200);
  const put = await h.call('PUT', '/api/proxy-config/targets/edge', { name: 'Edge', entrypoints: { web: 'http' } });
  t.is(put.status, 200);
  const changed = await changedDocument(h, 'edge', plain.headers.etag as string);
  t.true(routersOf(changed.json).includes('6-Jellyfin-Media-router'));
  const event = await sse.next((e) => e.event === 'provider' && JSON.parse(e.data).target === 'edge');
  t.deepEqual(JSON.parse(event.data), {
    etag: (changed.headers.etag as string).slice(1, -1),
    generated_at: changed.headers['x-config-generated-at'],
    target: 'edge',
  });
  t.false(
    sse.events.some((e) => e.event === 'provider' && JSON.parse(e.data).target === 'default'),
    'the default document did not change',
  );
});

test('Traefik mode: a resource id selects our router named by the id; host globs select by its rule', async (t) => {
  const h = await targetHarness(t, { active: 'traefik' });
  t.is((await h.call('POST', '/api/middlewares', authelia)).status, 201);
  for (const resource of [NEXTCLOUD, JELLYFIN]) {
    const assigned = await h.call('POST', `/api/resources/${resource}/middlewares`, { middleware_id: 'authelia' });
    t.is(assigned.status, 200, assigned.text);
  }
  const full = await waitFor(async () => {
    const doc = (await h.call('GET', '/api/v1/proxy-config')).json;
    return routersOf(doc).length === 2 ? doc : null;
  }, 500);
  t.deepEqual(routersOf(full), [NEXTCLOUD, JELLYFIN].sort());
  await createTarget(t, h, { name: 'Cloud', include: { resources: [NEXTCLOUD] } });
  t.deepEqual(routersOf((await documentOf(h, 'cloud')).json), [NEXTCLOUD]);
  await createTarget(t, h, { name: 'Media', include: { hosts: ['media.example.com'] } });
  const media = await documentOf(h, 'media');
  t.deepEqual(routersOf(media.json), [JELLYFIN]);
  t.true(validateTraefik(JSON.parse(media.text)), JSON.stringify(validateTraefik.errors));
});
