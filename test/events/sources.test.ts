/** Events from the discovery sync: upstream state, discovery writes (source discovery), provider regeneration. */
import test from 'ava';
import { harness } from '../resources/support.ts';
import { waitFor } from '../helpers/wait.ts';
import { dataOf, listen, stream } from './support.ts';

test('a sync that changes resources publishes object events with source discovery and a provider event with the served etag', async (t) => {
  const { app, fake } = await harness(t);
  const client = await stream(t, `${await listen(app)}/api/events?types=object,provider`);
  await waitFor(() => client.lastEventId, 5000);
  fake.state.pangolinFile = 'traefik-config-changed.json';
  const report = await app.resources.syncNow();
  t.true(report.ok);
  await client.next((e) => e.event === 'object' && JSON.parse(e.data).source === 'discovery');
  const discovered = dataOf(client, 'object').filter((d) => d.source === 'discovery');
  t.true(discovered.every((d) => d.collection === 'resources' && ['created', 'updated', 'deleted'].includes(d.action)));
  t.true(discovered.length > 0);

  const provider = await client.next(
    (e) => e.event === 'provider' && JSON.parse(e.data).etag === app.proxyConfig.current()!.json.etag.slice(1, -1),
    10_000,
  );
  const data = JSON.parse(provider.data);
  t.is(data.target, 'default');
  t.is(data.generated_at, app.proxyConfig.current()!.generatedAt);
  const served = await app.inject({ method: 'GET', url: '/api/proxy-config' });
  t.is(served.headers.etag, `"${data.etag}"`);
});

test('upstream events report a failing sync and its recovery, once per change of state', async (t) => {
  const { app, fake } = await harness(t);
  const client = await stream(t, `${await listen(app)}/api/events?types=upstream`);
  await waitFor(() => client.lastEventId, 5000);
  fake.state.fault = '500';
  t.false((await app.resources.syncNow()).ok);
  t.false((await app.resources.syncNow()).ok); // same failure again: no second event
  fake.state.fault = null;
  t.true((await app.resources.syncNow()).ok);
  await client.next((e) => JSON.parse(e.data).state === 'ok');
  const states = dataOf(client, 'upstream');
  t.is(states.length, 2, JSON.stringify(states));
  t.like(states[0], { source: 'pangolin', state: 'failed' });
  t.regex(states[0].message, /500/);
  t.deepEqual(states[1], { source: 'pangolin', state: 'ok', message: null });
});
