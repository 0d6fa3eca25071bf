/**
 * Provider polls answered before Fastify (the fast route, as `npm start` serves them through the
 * hot-reload host) are counted in `stackmanager_provider_polls_total`, 200s and 304s apart, and are
 * not in the HTTP series, whose hook they never reach (docs/API.md "Metrics").
 */
import test from 'ava';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import pino from 'pino';
import { AppHost } from '../../core/app-host.ts';
import { buildApp } from '../../core/app.ts';
import { builtinGroups } from '../../plugins/index.ts';
import { tempDir, testConfig } from '../helpers/build.ts';
import { startFakeUpstream } from '../helpers/fake-upstream.ts';
import { waitFor } from '../helpers/wait.ts';
import { writeSources } from '../resources/support.ts';
import { parsePrometheusText } from './prometheus-text.ts';

test('polls answered by the fast route are counted per target, instance and status', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const dataDir = path.join(await tempDir(t), 'data');
  await writeSources(dataDir, fake);
  const config = testConfig(dataDir, {
    auth: { mode: 'off' },
    datasources: { pangolin_url: fake.pangolinUrl, traefik_url: fake.url, active: 'pangolin' },
  });
  const host = new AppHost(
    (generation, serverFactory) => buildApp({ config, groups: builtinGroups, generation, serverFactory }),
    pino({ level: 'silent' }),
  );
  t.teardown(() => host.close());
  await new Promise<void>((resolve) => host.server.listen(0, '127.0.0.1', resolve));
  const app = await host.start();
  await app.resources.started();
  await app.proxyConfig.regenerate();
  let fast = 0;
  const original = app.fastRoutes.serve.bind(app.fastRoutes);
  app.fastRoutes.serve = (req, res) => {
    const done = original(req, res);
    if (done) fast++;
    return done;
  };
  const base = `http://127.0.0.1:${(host.server.address() as AddressInfo).port}`;
  const headers = { 'user-agent': 'Traefik/3.7.15' };

  const first = await fetch(`${base}/api/v1/proxy-config`, { headers });
  t.is(first.status, 200);
  const etag = first.headers.get('etag')!;
  await first.arrayBuffer();
  for (let i = 0; i < 3; i++) {
    const again = await fetch(`${base}/api/v1/proxy-config`, { headers: { ...headers, 'if-none-match': etag } });
    t.is(again.status, 304);
  }
  t.is(fast, 4, 'the fast route answered every poll');

  const scrape = await waitFor(async () => {
    const reply = await fetch(`${base}/metrics`);
    return reply.status === 200 ? reply.text() : null;
  }, 100);
  const metrics = parsePrometheusText(scrape);
  const polls = { target: 'default', instance: '127.0.0.1' };
  t.is(metrics.value('stackmanager_provider_polls_total', { ...polls, status: '200' }), 1);
  t.is(metrics.value('stackmanager_provider_polls_total', { ...polls, status: '304' }), 3);
  t.deepEqual(metrics.find('stackmanager_http_requests_total', { route: '/api/v1/proxy-config' }), []);
});
