import test from 'ava';
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import forge from 'node-forge';
import {
  assertClientError,
  call,
  certificateFromP12,
  createCa,
  createClient,
  downloadP12,
  handshake,
  handshakeServer,
  mtlsApp,
  mtlsFiles,
  PASSWORD,
} from './support.ts';

test('a downloaded PKCS#12 passes a real TLS handshake against our CA; a client without a certificate is refused', async (t) => {
  const { app, dataDir } = await mtlsApp(t);
  await createCa(t, app);
  const client = await createClient(t, app, { name: 'Zoë’s Laptop' });
  t.is(client.id, 'zoe-s-laptop');
  const p12 = await downloadP12(t, app, client.id);
  t.true(p12.includes(oidBytes('2.16.840.1.101.3.4.1.42')), 'key bag encrypted with AES-256-CBC');
  const caPem = await readFile(path.join(dataDir, 'mtls', 'ca.crt'), 'utf8');

  const server = await handshakeServer(t, caPem);
  const withCert = await handshake(server.port, { pfx: p12, passphrase: PASSWORD });
  t.is(withCert.greeting, 'hello\n', String(withCert.error));
  t.deepEqual(server.accepted, ['Zoë’s Laptop']);

  const without = await handshake(server.port);
  t.is(without.greeting, null);
  t.truthy(without.error);
  const wrongPassword = await handshake(server.port, { pfx: p12, passphrase: 'not the password' }).catch(
    (err: Error) => ({ greeting: null, error: err.message }),
  );
  t.is(wrongPassword.greeting, null);
  t.deepEqual(server.accepted, ['Zoë’s Laptop'], 'only the certificate holder got through');
});

test('the legacy (3DES) PKCS#12 also works, and the certificate has the profile of §4.8', async (t) => {
  const { app, dataDir } = await mtlsApp(t);
  const ca = await createCa(t, app, { organization: 'Acme', country: 'FR' });
  const client = await createClient(t, app, { name: 'Old Phone', legacy_p12: true, validity_days: 10 });
  t.like(client, {
    name: 'Old Phone',
    subject: 'CN=Old Phone,O=Acme,C=FR',
    revoked: false,
    revoked_at: null,
    legacy_p12: true,
    warnings: [],
  });
  t.is(Date.parse(client.expiry) - Date.parse(client.not_before), 10 * 86_400_000);
  const p12 = await downloadP12(t, app, client.id);
  // 3DES shrouded key bag
  const asn1 = forge.pkcs12.pkcs12FromAsn1(forge.asn1.fromDer(p12.toString('binary')), PASSWORD);
  t.is(asn1.getBags({ bagType: forge.pki.oids.pkcs8ShroudedKeyBag })[forge.pki.oids.pkcs8ShroudedKeyBag]!.length, 1);
  t.true(p12.includes(oidBytes('1.2.840.113549.1.12.1.3')), 'pbeWithSHAAnd3-KeyTripleDES-CBC');
  t.false(p12.includes(oidBytes('2.16.840.1.101.3.4.1.42')), 'no AES-256-CBC');

  const pem = certificateFromP12(p12);
  const cert = forge.pki.certificateFromPem(pem);
  t.like(cert.getExtension('keyUsage') as object, {
    digitalSignature: true,
    keyEncipherment: true,
    keyCertSign: false,
  });
  const eku = cert.getExtension('extKeyUsage') as { clientAuth?: boolean; serverAuth?: boolean };
  t.true(eku.clientAuth);
  t.falsy(eku.serverAuth);
  t.like(cert.getExtension('basicConstraints') as object, { cA: false });
  const x509 = new X509Certificate(pem);
  const caX509 = new X509Certificate(await readFile(path.join(dataDir, 'mtls', 'ca.crt')));
  t.true(x509.checkIssued(caX509) && x509.verify(caX509.publicKey));
  t.is(x509.serialNumber.toLowerCase(), client.serial);
  t.is(x509.fingerprint256.replaceAll(':', '').toLowerCase(), client.fingerprint_sha256);
  t.is(ca.ca_subject, 'CN=Test CA,O=Acme,C=FR');

  const server = await handshakeServer(t, caX509.toString());
  t.is((await handshake(server.port, { pfx: p12, passphrase: PASSWORD })).greeting, 'hello\n');
});

/** DER bytes of an OID, to find an algorithm inside a PKCS#12. */
const oidBytes = (oid: string) => Buffer.from(forge.asn1.oidToDer(oid).getBytes(), 'binary');

test('client files: metadata YAML 0644, key and PKCS#12 0600, no password anywhere; GET returns the PEM, ETag and 304', async (t) => {
  const { app, dataDir } = await mtlsApp(t);
  const handEdits: string[] = [];
  app.store.onAnyChange((event) => {
    if (event.source === 'file') handEdits.push(`${event.collection}/${event.id}`);
  });
  await createCa(t, app);
  const client = await createClient(t, app, { name: 'Desk', id: 'desk-1' });
  await app.store.settle();
  // the watcher sees the .crt/.key/.p12 writes but reads YAML files only: no hand edit, nothing invalid
  t.deepEqual(handEdits, []);
  t.deepEqual(app.store.invalidFiles(), []);
  const files = await mtlsFiles(dataDir);
  t.is(files['mtls/clients/desk-1.yaml'].mode, 0o644);
  t.is(files['mtls/clients/desk-1.crt'].mode, 0o644);
  t.is(files['mtls/clients/desk-1.key'].mode, 0o600);
  t.is(files['mtls/clients/desk-1.p12'].mode, 0o600);
  for (const [name, file] of Object.entries(files)) t.false(Buffer.from(file.bytes, 'base64').includes(PASSWORD), name);

  const one = await call(app, { url: '/api/mtls/clients/desk-1' });
  t.is(one.status, 200);
  t.is(one.body.cert, await readFile(path.join(dataDir, 'mtls', 'clients', 'desk-1.crt'), 'utf8'));
  t.is(one.headers.etag, `"${client.etag}"`);
  t.is(
    (await call(app, { url: '/api/mtls/clients/desk-1', headers: { 'if-none-match': `W/"${client.etag}"` } })).status,
    304,
  );
  const download = await app.inject({ url: '/api/mtls/clients/desk-1/download' });
  t.is(download.headers['content-type'], 'application/x-pkcs12');
  t.is(download.headers['content-disposition'], 'attachment; filename="desk-1.p12"');
  t.deepEqual(download.rawPayload, await readFile(path.join(dataDir, 'mtls', 'clients', 'desk-1.p12')));
});

test('GET /api/mtls/clients lists newest first with paging; ids and names are unique; no CA → 409 conflict', async (t) => {
  const { app } = await mtlsApp(t);
  assertClientError(
    t,
    await call(app, {
      method: 'POST',
      url: '/api/mtls/clients',
      payload: { name: 'Early', p12_password: PASSWORD, key_size: 2048 },
    }),
    409,
    'conflict',
  );
  await createCa(t, app, { validity_days: 7300 });
  const names = ['First', 'Second', 'Third'];
  for (const name of names) await createClient(t, app, { name });
  const all = await call(app, { url: '/api/mtls/clients' });
  t.is(all.headers['x-total-count'], '3');
  const created = all.body.map((c: { created_at: string }) => c.created_at);
  t.deepEqual(created, [...created].sort().reverse(), 'newest first');
  t.deepEqual(
    all.body.map((c: { id: string }) => c.id),
    ['third', 'second', 'first'],
  );
  const page = await call(app, { url: '/api/mtls/clients?page=2&page_size=2' });
  t.is(page.body.length, 1);
  t.regex(String(page.headers.link), /rel="prev"/);

  assertClientError(
    t,
    await call(app, {
      method: 'POST',
      url: '/api/mtls/clients',
      payload: { name: 'first', p12_password: PASSWORD, key_size: 2048 },
    }),
    409,
    'already_exists',
  );
  assertClientError(
    t,
    await call(app, {
      method: 'POST',
      url: '/api/mtls/clients',
      payload: { id: 'second', name: 'Other', p12_password: PASSWORD, key_size: 2048 },
    }),
    409,
    'already_exists',
  );
  // a derived id that is taken gets a suffix
  const derived = await createClient(t, app, { name: 'First!' });
  t.is(derived.id, 'first-2');
});

test('validity is capped at the CA expiry with a warning', async (t) => {
  const { app } = await mtlsApp(t);
  const ca = await createCa(t, app, { validity_days: 5 });
  const client = await createClient(t, app, { validity_days: 3650 });
  t.is(client.expiry, ca.ca_expiry);
  t.is(client.warnings.length, 1);
  t.regex(client.warnings[0], /CA's expiry/);
});

test('PUT /revoke marks the client revoked (repeat is a no-op), download then answers 409; DELETE removes its files', async (t) => {
  const { app, dataDir } = await mtlsApp(t);
  await createCa(t, app);
  const client = await createClient(t, app);
  assertClientError(
    t,
    await call(app, {
      method: 'PUT',
      url: `/api/mtls/clients/${client.id}/revoke`,
      headers: { 'if-match': '"stale"' },
    }),
    412,
  );
  const revoked = await call(app, {
    method: 'PUT',
    url: `/api/mtls/clients/${client.id}/revoke`,
    headers: { 'if-match': `"${client.etag}"` },
  });
  t.is(revoked.status, 200);
  t.true(revoked.body.revoked);
  t.regex(revoked.body.revoked_at, /Z$/);
  const again = await call(app, { method: 'PUT', url: `/api/mtls/clients/${client.id}/revoke` });
  t.is(again.body.revoked_at, revoked.body.revoked_at);
  t.is(again.body.etag, revoked.body.etag, 'no write');
  assertClientError(t, await call(app, { url: `/api/mtls/clients/${client.id}/download` }), 409, 'conflict');
  t.is((await call(app, { url: '/api/mtls/config' })).body.revoked_count, 1);

  t.is((await call(app, { method: 'DELETE', url: `/api/mtls/clients/${client.id}` })).status, 204);
  assertClientError(t, await call(app, { url: `/api/mtls/clients/${client.id}` }), 404, 'not_found');
  t.false(Object.keys(await mtlsFiles(dataDir)).some((f) => f.startsWith('mtls/clients/')));
  assertClientError(t, await call(app, { method: 'DELETE', url: `/api/mtls/clients/${client.id}` }), 404, 'not_found');
  assertClientError(t, await call(app, { method: 'PUT', url: '/api/mtls/clients/ghost/revoke' }), 404, 'not_found');
});
