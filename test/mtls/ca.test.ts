import test from 'ava';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { waitFor } from '../helpers/wait.ts';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import forge from 'node-forge';
import { assertClientError, call, createCa, createClient, mtlsApp, mtlsFiles } from './support.ts';

const KEY_MARKER = /PRIVATE KEY/;

test('GET /api/mtls/config without a CA: every CA field null, disabled, config.yaml written once', async (t) => {
  const { app, dataDir } = await mtlsApp(t);
  const r = await call(app, { url: '/api/mtls/config' });
  t.is(r.status, 200);
  t.like(r.body, {
    enabled: false,
    has_ca: false,
    ca_subject: null,
    ca_serial: null,
    ca_key_size: null,
    ca_not_before: null,
    ca_expiry: null,
    ca_fingerprint_sha256: null,
    client_count: 0,
    revoked_count: 0,
    crl_next_update: null,
  });
  t.regex(r.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.is(r.headers.etag, `"${r.body.etag}"`);
  t.is(
    (await call(app, { url: '/api/mtls/config', headers: { 'if-none-match': r.headers.etag as string } })).status,
    304,
  );
  t.deepEqual(Object.keys(await mtlsFiles(dataDir)), ['mtls/config.yaml']);
  t.is((await stat(path.join(dataDir, 'mtls'))).mode & 0o777, 0o700);
  // enabling needs a CA
  assertClientError(t, await call(app, { method: 'PUT', url: '/api/mtls/enable' }), 409, 'conflict');
  assertClientError(t, await call(app, { method: 'DELETE', url: '/api/mtls/ca' }), 404, 'not_found');
  assertClientError(t, await call(app, { url: '/api/mtls/crl' }), 404, 'not_found');
});

test('POST /api/mtls/ca creates a self-signed CA with the fields of the body; keys are stored 0600 and never returned', async (t) => {
  const { app, dataDir } = await mtlsApp(t);
  const r = await call(app, {
    method: 'POST',
    url: '/api/mtls/ca',
    payload: { common_name: 'Home CA', organization: 'Acme', country: 'DE', validity_days: 30, key_size: 2048 },
  });
  t.is(r.status, 201, JSON.stringify(r.body));
  t.is(r.headers.location, '/api/mtls/config');
  t.false(KEY_MARKER.test(r.raw));
  const body = r.body;
  t.like(body, {
    has_ca: true,
    enabled: false,
    ca_subject: 'CN=Home CA,O=Acme,C=DE',
    ca_key_size: 2048,
    client_count: 0,
    revoked_count: 0,
  });
  t.regex(body.ca_serial, /^[0-9a-f]{32}$/);
  t.regex(body.ca_fingerprint_sha256, /^[0-9a-f]{64}$/);
  t.is(Date.parse(body.ca_expiry) - Date.parse(body.ca_not_before), 30 * 86_400_000);
  t.true(Date.parse(body.crl_next_update) > Date.now() + 6 * 86_400_000);

  const dir = path.join(dataDir, 'mtls');
  const caPem = await readFile(path.join(dir, 'ca.crt'), 'utf8');
  const ca = new X509Certificate(caPem);
  t.true(ca.ca);
  t.true(ca.verify(ca.publicKey), 'self-signed');
  t.is(ca.serialNumber.toLowerCase(), body.ca_serial);
  t.is(ca.fingerprint256.replaceAll(':', '').toLowerCase(), body.ca_fingerprint_sha256);
  t.regex(ca.subject, /CN=Home CA/);
  // CA:true pathlen 0, keyCertSign + cRLSign, SHA-256 with RSA
  const parsed = forge.pki.certificateFromPem(caPem);
  t.like(parsed.getExtension('basicConstraints') as object, { cA: true, pathLenConstraint: 0, critical: true });
  t.like(parsed.getExtension('keyUsage') as object, {
    keyCertSign: true,
    cRLSign: true,
    digitalSignature: false,
    critical: true,
  });
  t.is(parsed.siginfo.algorithmOid, forge.pki.oids.sha256WithRSAEncryption);
  const files = await mtlsFiles(dataDir);
  t.is(files['mtls/ca.key'].mode, 0o600);
  t.is(files['mtls/ca.crt'].mode, 0o644);
  t.truthy(files['mtls/crl.pem']);
  const config = await readFile(path.join(dir, 'config.yaml'), 'utf8');
  t.false(KEY_MARKER.test(config));
  t.regex(config, new RegExp(`serial: ${body.ca_serial}`));

  // no endpoint hands out a key
  for (const url of [
    '/api/mtls/config',
    '/api/mtls/clients',
    '/api/mtls/middleware/config',
    '/api/mtls/plugin/check',
    '/api/mtls/crl',
  ]) {
    const reply = await app.inject({ url });
    t.is(reply.statusCode, 200, url);
    t.false(KEY_MARKER.test(reply.body), url);
  }
  const client = await createClient(t, app);
  const one = await app.inject({ url: `/api/mtls/clients/${client.id}` });
  t.false(KEY_MARKER.test(one.body));
  t.regex(one.json().cert, /^-----BEGIN CERTIFICATE-----/);
});

test('POST /api/mtls/ca answers 409 already_exists while a CA exists; force=true replaces it and deletes every client', async (t) => {
  const { app, dataDir } = await mtlsApp(t);
  const first = await createCa(t, app);
  const client = await createClient(t, app);
  const before = await mtlsFiles(dataDir);
  const again = await call(app, {
    method: 'POST',
    url: '/api/mtls/ca',
    payload: { common_name: 'Other', key_size: 2048 },
  });
  assertClientError(t, again, 409, 'already_exists');
  t.deepEqual(await mtlsFiles(dataDir), before, 'nothing written');

  const replaced = await createCa(t, app, { common_name: 'Second CA', organization: '' }, '?force=true');
  t.not(replaced.ca_serial, first.ca_serial);
  t.is(replaced.ca_subject, 'CN=Second CA,C=DE');
  t.is(replaced.client_count, 0);
  assertClientError(t, await call(app, { url: `/api/mtls/clients/${client.id}` }), 404, 'not_found');
  const files = Object.keys(await mtlsFiles(dataDir));
  t.false(
    files.some((f) => f.startsWith('mtls/clients/')),
    files.join(' '),
  );
  t.not((await mtlsFiles(dataDir))['mtls/ca.key'].bytes, before['mtls/ca.key'].bytes);
});

test('PUT /enable and /disable switch mTLS; DELETE /api/mtls/ca is in_use while clients exist, force deletes them', async (t) => {
  const { app, dataDir } = await mtlsApp(t);
  await createCa(t, app);
  const enabled = await call(app, { method: 'PUT', url: '/api/mtls/enable' });
  t.is(enabled.status, 200);
  t.true(enabled.body.enabled);
  t.is(enabled.headers.etag, `"${enabled.body.etag}"`);
  // If-Match on the config object
  assertClientError(
    t,
    await call(app, { method: 'PUT', url: '/api/mtls/disable', headers: { 'if-match': '"nope"' } }),
    412,
    'precondition_failed',
  );
  const disabled = await call(app, {
    method: 'PUT',
    url: '/api/mtls/disable',
    headers: { 'if-match': enabled.headers.etag as string },
  });
  t.false(disabled.body.enabled);
  t.true((await call(app, { method: 'PUT', url: '/api/mtls/enable' })).body.enabled);

  const a = await createClient(t, app, { name: 'A' });
  await createClient(t, app, { name: 'B' });
  const blocked = await call(app, { method: 'DELETE', url: '/api/mtls/ca' });
  assertClientError(t, blocked, 409, 'in_use');
  t.deepEqual(blocked.body.details.map((d: { path: string }) => d.path).sort(), [
    `/api/mtls/clients/${a.id}`,
    '/api/mtls/clients/b',
  ]);
  t.is((await call(app, { url: '/api/mtls/config' })).body.client_count, 2);

  t.is((await call(app, { method: 'DELETE', url: '/api/mtls/ca?force=true' })).status, 204);
  const after = await call(app, { url: '/api/mtls/config' });
  t.like(after.body, { enabled: false, has_ca: false, client_count: 0, crl_next_update: null, ca_serial: null });
  t.deepEqual(Object.keys(await mtlsFiles(dataDir)), ['mtls/config.yaml']);
  assertClientError(t, await call(app, { url: '/api/mtls/crl' }), 404, 'not_found');
});

test('the CA survives a restart: a new app on the same data dir reads it back', async (t) => {
  const { app, dataDir } = await mtlsApp(t);
  const ca = await createCa(t, app);
  await call(app, { method: 'PUT', url: '/api/mtls/enable' });
  await app.close();
  const { build } = await import('../helpers/build.ts');
  const again = await build(t, { dataDir, config: { auth: { mode: 'off' } } });
  const r = await call(again, { url: '/api/mtls/config' });
  t.like(r.body, {
    has_ca: true,
    enabled: true,
    ca_serial: ca.ca_serial,
    ca_fingerprint_sha256: ca.ca_fingerprint_sha256,
    crl_next_update: ca.crl_next_update,
  });
});

test('hand edits of config.yaml are taken live (GitOps): the switch and the middleware settings; an invalid edit is ignored', async (t) => {
  const { app, dataDir } = await mtlsApp(t);
  await createCa(t, app);
  await call(app, { method: 'PUT', url: '/api/mtls/enable' });
  const file = path.join(dataDir, 'mtls', 'config.yaml');
  const text = await readFile(file, 'utf8');
  t.regex(text, /^enabled: true$/m);
  await writeFile(
    file,
    text
      .replace(/^enabled: true$/m, 'enabled: false')
      .concat('middleware:\n  reject_code: 451\n  refresh_interval: 90\n'),
  );
  // writeFile truncates, then writes: a read in between may see an empty file for a moment, so wait for the whole edit
  await waitFor(
    async () =>
      !(await call(app, { url: '/api/mtls/config' })).body.enabled &&
      (await call(app, { url: '/api/mtls/middleware/config' })).body.reject_code === 451,
    5000,
  );
  t.like((await call(app, { url: '/api/mtls/middleware/config' })).body, { reject_code: 451, refresh_interval: '90s' });
  t.true((await call(app, { url: '/api/mtls/config' })).body.has_ca, 'the CA files are read again and still match');

  await writeFile(file, 'enabled: maybe\n');
  await waitFor(() => app.store.invalidFiles().some((f) => f.path === file), 5000);
  t.like(
    (await call(app, { url: '/api/mtls/middleware/config' })).body,
    { reject_code: 451 },
    'last valid version stays',
  );
});

test('a restore that puts back other CA files together with config.yaml is picked up without a restart', async (t) => {
  const { app, dataDir } = await mtlsApp(t);
  const dir = path.join(dataDir, 'mtls');
  const first = await createCa(t, app, { common_name: 'First' });
  const saved = await Promise.all(['ca.crt', 'ca.key', 'config.yaml'].map((f) => readFile(path.join(dir, f))));
  const second = await createCa(t, app, { common_name: 'Second' }, '?force=true');
  t.not(second.ca_serial, first.ca_serial);
  // what a restore does: the files of the first CA come back, config.yaml last
  await writeFile(path.join(dir, 'ca.key'), saved[1], { mode: 0o600 });
  await writeFile(path.join(dir, 'ca.crt'), saved[0]);
  await writeFile(path.join(dir, 'config.yaml'), saved[2]);
  const view = await waitFor(async () => {
    const body = (await call(app, { url: '/api/mtls/config' })).body;
    return body.ca_serial === first.ca_serial ? body : undefined;
  }, 5000);
  t.is(view.ca_subject, first.ca_subject);
});
