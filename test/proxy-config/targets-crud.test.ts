/** Provider targets as stored objects: CRUD, errors, references, hand edits and backups (real sockets). */
import test from 'ava';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { waitFor } from '../helpers/wait.ts';
import { GRAFANA, JELLYFIN } from '../resources/support.ts';
import { routersOf, targetHarness } from './targets-support.ts';

const authelia = {
  id: 'authelia',
  name: 'Authelia',
  type: 'forwardAuth',
  config: { address: 'http://authelia:9091/api/authz/forward-auth' },
};

test('create, list, read (304), replace with If-Match, delete: like middlewares, with Location, ETags and audit lines', async (t) => {
  const h = await targetHarness(t);
  const created = await h.call('POST', '/api/proxy-config/targets', {
    name: 'Edge Paris',
    include: { hosts: ['*.example.com'] },
    entrypoints: { websecure: 'https' },
  });
  t.is(created.status, 201, created.text);
  t.is(created.headers.location, '/api/proxy-config/targets/edge-paris');
  t.is(created.headers.etag, `"${created.json.etag}"`);
  t.like(created.json, {
    id: 'edge-paris',
    name: 'Edge Paris',
    description: '',
    include: { hosts: ['*.example.com'], resources: [] },
    exclude: { hosts: [], resources: [] },
    entrypoints: { websecure: 'https' },
    middlewares: [],
    url: '/api/v1/proxy-config/edge-paris',
  });
  const onDisk = await readFile(path.join(h.dataDir, 'targets', 'edge-paris.yaml'), 'utf8');
  t.regex(onDisk, /name: Edge Paris/);
  t.notRegex(onDisk, /exclude/, 'fields not given are not written');

  const list = await h.call('GET', '/api/proxy-config/targets');
  t.is(list.status, 200);
  t.is(list.headers['x-total-count'], '1');
  t.deepEqual(
    list.json.map((x: { id: string }) => x.id),
    ['edge-paris'],
  );

  const one = await h.call('GET', '/api/proxy-config/targets/edge-paris');
  t.deepEqual(one.json, created.json);
  const cached = await h.call('GET', '/api/proxy-config/targets/edge-paris', undefined, {
    'if-none-match': created.headers.etag as string,
  });
  t.is(cached.status, 304);

  const body = { name: 'Edge Paris', exclude: { resources: [JELLYFIN] } };
  const stale = await h.call('PUT', '/api/proxy-config/targets/edge-paris', body, { 'if-match': '"0000"' });
  t.is(stale.status, 412);
  t.is(stale.json.id, 'precondition_failed');
  const replaced = await h.call('PUT', '/api/proxy-config/targets/edge-paris', body, {
    'if-match': created.headers.etag as string,
  });
  t.is(replaced.status, 200, replaced.text);
  t.is(replaced.json.include, null, 'a full replace: include left out means every resource');
  t.deepEqual(replaced.json.exclude, { hosts: [], resources: [JELLYFIN] });
  t.not(replaced.json.etag, created.json.etag);

  const staleDelete = await h.call('DELETE', '/api/proxy-config/targets/edge-paris', undefined, {
    'if-match': created.headers.etag as string,
  });
  t.is(staleDelete.status, 412);
  const deleted = await h.call('DELETE', '/api/proxy-config/targets/edge-paris', undefined, {
    'if-match': replaced.headers.etag as string,
  });
  t.is(deleted.status, 204);
  const gone = await h.call('GET', '/api/proxy-config/targets/edge-paris');
  t.is(gone.status, 404);
  t.deepEqual(Object.keys(gone.json).sort(), ['id', 'message']);
  t.is(gone.json.id, 'not_found');
  t.deepEqual(await readdir(path.join(h.dataDir, 'targets')), []);
  for (const method of ['PUT', 'DELETE']) {
    const missing = await h.call(
      method,
      '/api/proxy-config/targets/nope',
      method === 'PUT' ? { name: 'x' } : undefined,
    );
    t.is(missing.status, 404, method);
  }

  const audit = await waitFor(async () => {
    const text = await readFile(path.join(h.dataDir, 'audit.log'), 'utf8').catch(() => '');
    return text.includes('DELETE') && text.includes('/api/proxy-config/targets/edge-paris') ? text : null;
  }, 100);
  t.regex(audit, /POST[^\n]*\/api\/proxy-config\/targets/);
});

test('bad input answers 422 naming the field and writes nothing; duplicates 409; reserved ids never taken', async (t) => {
  const h = await targetHarness(t);
  const cases: [unknown, string][] = [
    [{ name: '  ' }, '/name'],
    [{ name: 'a', include: { hosts: ['cloud..example.com'] } }, '/include/hosts/0'],
    [{ name: 'a', include: { hosts: ['ok.example.com', 'bad host'] } }, '/include/hosts/1'],
    [{ name: 'a', exclude: { hosts: ['a**.example.com'] } }, '/exclude/hosts/0'],
    [{ name: 'a', include: { hosts: [''] } }, '/include/hosts/0'],
    [{ name: 'a', include: {} }, '/include'],
    [{ name: 'a', include: { resources: [GRAFANA, 'no-such-resource'] } }, '/include/resources/1'],
    [{ name: 'a', exclude: { resources: ['ghost'] } }, '/exclude/resources/0'],
    [{ name: 'a', middlewares: ['ghost'] }, '/middlewares/0'],
    [{ name: 'a', entrypoints: { websecure: 'has space' } }, '/entrypoints/websecure'],
    [{ name: 'a', id: 'status' }, '/id'],
    [{ name: 'a', include: { hosts: 'cloud.example.com' } }, '/include/hosts'],
  ];
  for (const [body, pointer] of cases) {
    const res = await h.call('POST', '/api/proxy-config/targets', body);
    t.is(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
    t.is(res.json.id, 'validation_failed');
    t.true(
      res.json.details.some((d: { path: string }) => d.path === pointer),
      `${JSON.stringify(body)} names ${pointer}: ${res.text}`,
    );
  }
  t.deepEqual(await readdir(path.join(h.dataDir, 'targets')), []);

  t.is((await h.call('POST', '/api/proxy-config/targets', { name: 'Edge' })).status, 201);
  const sameName = await h.call('POST', '/api/proxy-config/targets', { name: 'EDGE' });
  t.is(sameName.status, 409);
  t.is(sameName.json.id, 'already_exists');
  const sameId = await h.call('POST', '/api/proxy-config/targets', { id: 'edge', name: 'Other' });
  t.is(sameId.status, 409);
  t.is((await h.call('POST', '/api/proxy-config/targets', { name: 'Second' })).status, 201);
  const rename = await h.call('PUT', '/api/proxy-config/targets/second', { name: 'edge' });
  t.is(rename.status, 409, 'a rename onto another target name');
  const mismatch = await h.call('PUT', '/api/proxy-config/targets/second', { id: 'other', name: 'Second' });
  t.is(mismatch.status, 422);
  const status = await h.call('POST', '/api/proxy-config/targets', { name: 'Status' });
  t.is(status.json.id, 'status-2', 'a name whose slug is reserved gets a suffix');
});

test('a middleware appended by a target lists it in used_by; DELETE answers 409 in_use, force removes it from the target', async (t) => {
  const h = await targetHarness(t);
  t.is((await h.call('POST', '/api/middlewares', authelia)).status, 201);
  t.is((await h.call('POST', '/api/proxy-config/targets', { name: 'Edge', middlewares: ['authelia'] })).status, 201);
  const mw = await h.call('GET', '/api/middlewares/authelia');
  t.deepEqual(mw.json.used_by, ['/api/proxy-config/targets/edge']);
  const refused = await h.call('DELETE', '/api/middlewares/authelia');
  t.is(refused.status, 409);
  t.is(refused.json.id, 'in_use');
  const forced = await h.call('DELETE', '/api/middlewares/authelia?force=true');
  t.is(forced.status, 204, forced.text);
  t.deepEqual((await h.call('GET', '/api/proxy-config/targets/edge')).json.middlewares, []);
});

test('a hand edit of data/targets/x.yaml is picked up and served; a bad one is listed in status invalid_files and the last valid one stays', async (t) => {
  const h = await targetHarness(t);
  const file = path.join(h.dataDir, 'targets', 'edge.yaml');
  await writeFile(file, 'name: Edge by hand\ninclude:\n  hosts: ["grafana.example.com"]\n');
  const served = await waitFor(async () => {
    const res = await h.call('GET', '/api/v1/proxy-config/edge');
    return res.status === 200 ? res : null;
  }, 500);
  t.deepEqual(routersOf(served.json), ['2-Grafana-router', '2-Grafana-router-redirect']);
  t.is((await h.call('GET', '/api/proxy-config/targets/edge')).json.name, 'Edge by hand');

  await writeFile(file, 'name: Edge by hand\ninclude:\n  hosts: ["grafana..example.com"]\n');
  const status = await waitFor(async () => {
    const res = await h.call('GET', '/api/proxy-config/status');
    return res.json.invalid_files.some((f: { path: string }) => f.path === path.join('targets', 'edge.yaml'))
      ? res
      : null;
  }, 500);
  const entry = status.json.invalid_files.find((f: { path: string }) => f.path === path.join('targets', 'edge.yaml'));
  t.regex(entry.message, /include\/hosts\/0|empty label/);
  t.is(status.json.status, 'degraded');
  const still = await h.call('GET', '/api/v1/proxy-config/edge');
  t.deepEqual(routersOf(still.json), ['2-Grafana-router', '2-Grafana-router-redirect'], 'last valid version in effect');

  // a file named like a reserved id is reported, never served
  await writeFile(path.join(h.dataDir, 'targets', 'status.yaml'), 'name: Reserved\n');
  await waitFor(async () => {
    const res = await h.call('GET', '/api/proxy-config/status');
    return res.json.invalid_files.some((f: { path: string }) => f.path === path.join('targets', 'status.yaml'));
  }, 500);
});

test('backups include data/targets: a deleted target comes back with a restore', async (t) => {
  const h = await targetHarness(t);
  const created = await h.call('POST', '/api/proxy-config/targets', { name: 'Edge', include: { hosts: ['**'] } });
  t.is(created.status, 201);
  const backup = await h.call('POST', '/api/backup/create', {});
  t.is(backup.status, 201, backup.text);
  const dry = await h.call('POST', '/api/backup/create', { dry_run: true });
  t.true(dry.json.entries.some((e: { path: string }) => e.path === 'data/targets/edge.yaml'));
  t.is((await h.call('DELETE', '/api/proxy-config/targets/edge')).status, 204);
  const restored = await h.call('POST', '/api/backup/restore', { backup_id: backup.json.id });
  t.is(restored.status, 200, restored.text);
  const back = await h.call('GET', '/api/proxy-config/targets/edge');
  t.is(back.status, 200);
  t.deepEqual(back.json.include, { hosts: ['**'], resources: [] });
  const doc = await waitFor(async () => {
    const res = await h.call('GET', '/api/v1/proxy-config/edge');
    return res.status === 200 ? res : null;
  }, 500);
  t.true(routersOf(doc.json).length > 0);
});
