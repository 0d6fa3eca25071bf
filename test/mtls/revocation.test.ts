import test from 'ava';
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import forge from 'node-forge';
import { CrlSchedule } from '../../plugins/mtls/crl.ts';
import { waitFor } from '../helpers/wait.ts';
import {
  call,
  certificateFromP12,
  createCa,
  createClient,
  downloadP12,
  forwardedHeader,
  handshake,
  handshakeServer,
  hasOpenssl,
  mtlsApp,
  opensslCrlText,
  parseCrl,
  PASSWORD,
  serverIdentity,
} from './support.ts';

if (!hasOpenssl) console.warn('openssl not found: CRLs are checked with the ASN.1 parser only');

const verify = (app: Parameters<typeof call>[0], header?: string, method: 'GET' | 'POST' = 'GET') =>
  call(app, {
    method,
    url: '/api/mtls/verify',
    headers: header === undefined ? {} : { 'x-forwarded-tls-client-cert': header },
  });

test('revoking re-signs the CRL with the serial (CRL number + 1); openssl verifies it against the CA', async (t) => {
  const { app, dataDir } = await mtlsApp(t);
  await createCa(t, app);
  const kept = await createClient(t, app, { name: 'Kept' });
  const gone = await createClient(t, app, { name: 'Gone' });
  const crlFile = path.join(dataDir, 'mtls', 'crl.pem');
  const caFile = path.join(dataDir, 'mtls', 'ca.crt');
  const before = parseCrl(await readFile(crlFile, 'utf8'));
  t.deepEqual(before.serials, []);

  t.is((await call(app, { method: 'PUT', url: `/api/mtls/clients/${gone.id}/revoke` })).status, 200);
  const pem = await readFile(crlFile, 'utf8');
  const after = parseCrl(pem);
  t.is(after.number, before.number + 1);
  t.deepEqual(after.serials, [gone.serial.replace(/^0+/, '')]);
  t.false(after.serials.includes(kept.serial));
  const config = (await call(app, { url: '/api/mtls/config' })).body;
  t.is(
    Math.floor(Date.parse(config.crl_next_update) / 1000),
    after.nextUpdate.getTime() / 1000,
    'CRL times hold whole seconds',
  );
  t.true(
    Math.abs(after.nextUpdate.getTime() - Date.now() - 7 * 86_400_000) < 120_000,
    'nextUpdate = now + crl_validity_days',
  );

  const text = await opensslCrlText(crlFile, caFile);
  if (text !== null) {
    t.regex(text, /verify OK/);
    t.regex(text, new RegExp(`Serial Number: ${gone.serial.toUpperCase()}`));
    t.notRegex(text, new RegExp(kept.serial.toUpperCase()));
    t.regex(text, new RegExp(`X509v3 CRL Number: \\n\\s+${after.number}\\b`));
  }

  // GET /api/mtls/crl serves the same CRL as PEM or DER
  const served = await app.inject({ url: '/api/mtls/crl' });
  t.is(served.headers['content-type'], 'application/x-pem-file');
  t.is(served.body, pem);
  const der = await app.inject({ url: '/api/mtls/crl?format=der' });
  t.is(der.headers['content-type'], 'application/pkix-crl');
  t.is(der.rawPayload.toString('binary'), forge.pem.decode(pem)[0].body);
});

test('a TLS server using our CRL refuses the revoked certificate and still accepts the others', async (t) => {
  const { app, dataDir } = await mtlsApp(t);
  await createCa(t, app);
  const good = await createClient(t, app, { name: 'Good' });
  const bad = await createClient(t, app, { name: 'Bad' });
  const goodP12 = await downloadP12(t, app, good.id);
  const badP12 = await downloadP12(t, app, bad.id);
  await call(app, { method: 'PUT', url: `/api/mtls/clients/${bad.id}/revoke` });
  const caPem = await readFile(path.join(dataDir, 'mtls', 'ca.crt'), 'utf8');
  const crlPem = (await app.inject({ url: '/api/mtls/crl' })).body;
  const server = await handshakeServer(t, caPem, crlPem);
  t.is((await handshake(server.port, { pfx: goodP12, passphrase: PASSWORD })).greeting, 'hello\n');
  t.is((await handshake(server.port, { pfx: badP12, passphrase: PASSWORD })).greeting, null);
  t.deepEqual(server.accepted, ['Good']);
});

test('/api/mtls/verify: 403 forbidden with the reject message for a revoked certificate of our CA; 200 otherwise', async (t) => {
  const { app, dataDir } = await mtlsApp(t);
  await createCa(t, app);
  const good = await createClient(t, app, { name: 'Good' });
  const bad = await createClient(t, app, { name: 'Bad' });
  const goodPem = certificateFromP12(await downloadP12(t, app, good.id));
  const badPem = certificateFromP12(await downloadP12(t, app, bad.id));
  const caPem = await readFile(path.join(dataDir, 'mtls', 'ca.crt'), 'utf8');

  // before the revocation every certificate passes
  t.is((await verify(app, forwardedHeader(badPem))).status, 200);
  await call(app, { method: 'PUT', url: `/api/mtls/clients/${bad.id}/revoke` });
  await call(app, {
    method: 'PUT',
    url: '/api/mtls/middleware/config',
    payload: { reject_message: 'Certificate revoked, ask IT' },
  });

  const refused = await verify(app, forwardedHeader(badPem));
  t.is(refused.status, 403);
  t.deepEqual(refused.body, { id: 'forbidden', message: 'Certificate revoked, ask IT' });
  // any method (forwardAuth may preserve the request's), a body of any type, URL-escaped (Traefik v2) or full PEM
  t.is(
    (
      await app.inject({
        method: 'POST',
        url: '/api/mtls/verify',
        headers: { 'x-forwarded-tls-client-cert': forwardedHeader(badPem), 'content-type': 'text/plain' },
        payload: 'x',
      })
    ).statusCode,
    403,
  );
  t.is((await verify(app, encodeURIComponent(forwardedHeader(badPem)))).status, 403);
  t.is((await verify(app, badPem)).status, 403);
  // the revoked one inside a chain (leaf, CA)
  t.is((await verify(app, forwardedHeader(badPem, caPem))).status, 403);

  const ok = await verify(app, forwardedHeader(goodPem));
  t.is(ok.status, 200);
  t.is(ok.raw, '');
  t.is((await verify(app)).status, 200, 'no header');
  t.is((await verify(app, 'not a certificate')).status, 200, 'garbage');
  t.is((await verify(app, '%zz')).status, 200, 'bad escape');
  t.is((await app.inject({ method: 'HEAD', url: '/api/mtls/verify' })).statusCode, 200);

  // a certificate of another issuer with the same serial: not ours, so 200
  const foreign = foreignCertificate(bad.serial);
  t.is(forge.pki.certificateFromPem(foreign).serialNumber, bad.serial);
  t.is((await verify(app, forwardedHeader(foreign))).status, 200);
});

test('DELETE of a client keeps its serial in the CRL and refused at /verify; a new CA starts a clean CRL', async (t) => {
  const { app, dataDir } = await mtlsApp(t);
  await createCa(t, app);
  const client = await createClient(t, app, { name: 'Lost phone' });
  const pem = certificateFromP12(await downloadP12(t, app, client.id));
  const number = parseCrl(await readFile(path.join(dataDir, 'mtls', 'crl.pem'), 'utf8')).number;
  t.is((await call(app, { method: 'DELETE', url: `/api/mtls/clients/${client.id}` })).status, 204);
  const crl = parseCrl(await readFile(path.join(dataDir, 'mtls', 'crl.pem'), 'utf8'));
  t.deepEqual(crl.serials, [client.serial.replace(/^0+/, '')]);
  t.is(crl.number, number + 1);
  t.is((await verify(app, forwardedHeader(pem))).status, 403);
  t.regex(await readFile(path.join(dataDir, 'mtls', 'config.yaml'), 'utf8'), new RegExp(`serial: ${client.serial}`));

  await createCa(t, app, { common_name: 'Fresh' }, '?force=true');
  const fresh = parseCrl(await readFile(path.join(dataDir, 'mtls', 'crl.pem'), 'utf8'));
  t.deepEqual(fresh.serials, []);
  t.is(fresh.number, 1);
});

test('a client file deleted by hand is revoked like an API delete: serial into the CRL, its other files removed', async (t) => {
  const { app, dataDir } = await mtlsApp(t);
  await createCa(t, app);
  const client = await createClient(t, app, { name: 'Handy' });
  await rm(path.join(dataDir, 'mtls', 'clients', `${client.id}.yaml`));
  const crlFile = path.join(dataDir, 'mtls', 'crl.pem');
  await waitFor(
    async () => parseCrl(await readFile(crlFile, 'utf8')).serials.includes(client.serial.replace(/^0+/, '')),
    5000,
  );
  await app.store.settle();
  t.is((await call(app, { url: '/api/mtls/config' })).body.client_count, 0);
  const left = (kind: string) => existsSync(path.join(dataDir, 'mtls', 'clients', `${client.id}.${kind}`));
  // removed one after another (p12, key, crt), each made durable: wait for the last, not the first
  await waitFor(() => ['crt', 'key', 'p12'].every((kind) => !left(kind)), 5000);
  t.deepEqual(['crt', 'key', 'p12'].filter(left), []);
});

test('/api/mtls/verify is public in every auth mode, the other mTLS routes are class C', async (t) => {
  const { app } = await mtlsApp(t, { auth: { mode: 'all' } });
  t.is((await verify(app)).status, 200);
  t.is((await call(app, { url: '/api/mtls/config' })).status, 401);
  t.is((await call(app, { url: '/api/mtls/plugin/check' })).status, 401);
});

test('CrlSchedule re-signs once the interval after the last signing has passed, and never after close()', async (t) => {
  let signed = 0;
  const schedule = new CrlSchedule(
    async () => {
      signed += 1;
    },
    50,
    (err) => t.fail(String(err)),
  );
  const now = new Date();
  schedule.arm(new Date(now.getTime() - 60), now); // overdue: at once
  await waitFor(() => signed === 1, 2000);
  schedule.arm(now, now); // 50 ms after the last signing
  await waitFor(() => signed === 2, 2000);
  // a closed schedule ignores arm(): armed overdue before an open one, it would have fired first
  schedule.close();
  schedule.arm(new Date(0), new Date());
  let witness = 0;
  const other = new CrlSchedule(
    async () => {
      witness += 1;
    },
    50,
    (err) => t.fail(String(err)),
  );
  other.arm(new Date(0), new Date());
  await waitFor(() => witness === 1, 2000);
  t.is(signed, 2);
  other.close();
});

/** A self-signed certificate of another issuer carrying a given serial. */
function foreignCertificate(serial: string): string {
  const identity = serverIdentity();
  const cert = forge.pki.certificateFromPem(identity.cert);
  cert.serialNumber = serial;
  cert.sign(forge.pki.privateKeyFromPem(identity.key) as forge.pki.rsa.PrivateKey, forge.md.sha256.create());
  return forge.pki.certificateToPem(cert);
}

test("/api/mtls/verify, called by Traefik for someone else's request: never audited, and the client's Accept version is not judged", async (t) => {
  const { app, dataDir } = await mtlsApp(t, { audit: { enabled: true } });
  const asForwarded = await app.inject({
    method: 'POST',
    url: '/api/mtls/verify',
    headers: { accept: 'application/json; version=2', 'content-type': 'text/plain' },
    payload: 'form data',
  });
  t.is(asForwarded.statusCode, 200, asForwarded.body);
  // the same Accept on one of our own routes is refused, and a write there is audited
  t.is(
    (await app.inject({ url: '/api/mtls/config', headers: { accept: 'application/json; version=2' } })).statusCode,
    406,
  );
  t.is((await app.inject({ method: 'PUT', url: '/api/mtls/disable' })).statusCode, 200);
  await app.audit.flush();
  const lines = (await readFile(path.join(dataDir, 'audit.log'), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { path: string });
  t.deepEqual(
    lines.map((line) => line.path),
    ['/api/mtls/disable'],
  );
});
