/**
 * The certificate check and the notifications group together (API.md §4.21 `certs`, §4.22): a
 * certificate in acme.json that expires in 2 days reaches a real webhook receiver on loopback as a
 * `certs` notification, and `stackmanager_notifications_total{channel,status}` counts it.
 */
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import test from 'ava';
import { build, tempDir } from '../helpers/build.ts';
import { acmeJson, makeCertificate } from '../helpers/certificates.ts';
import { waitFor } from '../helpers/wait.ts';
import { parsePrometheusText } from './prometheus-text.ts';

test('a certificate 2 days from expiry in acme.json → a certs notification delivered to a webhook, counted in /metrics', async (t) => {
  const received: Array<{ url: string; body: string }> = [];
  const receiver = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      received.push({ url: request.url ?? '', body });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    receiver.closeAllConnections();
    receiver.close();
  });
  const dir = await tempDir(t);
  const acmePath = path.join(dir, 'acme.json');
  await writeFile(acmePath, '', { mode: 0o600 }); // Traefik's before its first certificate
  const app = await build(t, {
    dataDir: path.join(dir, 'data'),
    config: { auth: { mode: 'off' }, proxy: { acme_path: acmePath } },
  });
  const created = await app.inject({
    method: 'POST',
    url: '/api/notifications/channels',
    payload: {
      name: 'Certs Hook',
      type: 'webhook',
      categories: ['certs'],
      config: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` },
    },
  });
  t.is(created.statusCode, 201, created.body);

  const certificate = makeCertificate('mail.example.test', new Date(Date.now() + 2 * 86_400_000 + 3_600_000));
  await writeFile(acmePath, acmeJson([certificate]), { mode: 0o600 });
  await app.certificates.check();
  await waitFor(() => received.length >= 1, 500);
  t.is(received.length, 1);
  t.is(received[0].url, '/hook');
  t.true(received[0].body.includes('mail.example.test'), received[0].body);
  // the private key of acme.json never leaves the file
  t.false(received[0].body.includes('PRIVATE KEY'));

  // the receiver answered before the delivery is recorded as sent: wait for the counter
  await waitFor(async () => {
    const now = parsePrometheusText((await app.inject({ url: '/metrics' })).body);
    return now.find('stackmanager_notifications_total', { channel: 'Certs Hook', status: 'sent' }).length === 1;
  }, 500);
  const after = parsePrometheusText((await app.inject({ url: '/metrics' })).body);
  t.is(after.value('stackmanager_notifications_total', { channel: 'Certs Hook', status: 'sent' }), 1);
  t.is(
    after.value('stackmanager_certificate_not_after_timestamp_seconds', { cn: 'mail.example.test' }),
    certificate.notAfter,
  );
});
