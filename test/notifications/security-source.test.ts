/**
 * API.md §4.21 `security`: manual bans and unbans (info), from the routes of §4.23 and §4.12 on a
 * private real CrowdSec LAPI, through the `decision` event to a real webhook receiver. The event and
 * the message name the token, never a credential.
 */
import anyTest, { type TestFn } from 'ava';
import type { EventType } from '../../plugins/events/index.ts';
import { build } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';
import { crowdsecConfig, useLapi, type Lapi } from '../helpers/crowdsec-lapi.ts';
import { addChannel, quietUpstream, startReceiver } from './support.ts';

const test = anyTest as TestFn<{ lapi?: Lapi }>;
const lapiTest = useLapi(test, 'notifications security tests');

lapiTest('a manual ban, its deletion and an unban each raise security/info and a decision event', async (t) => {
  const { lapi } = t.context;
  const app = await build(t, {
    config: {
      ...crowdsecConfig(lapi!),
      notifications: { tick_ms: 20, ...quietUpstream, crowdsec_digest_s: 86_400 },
    },
  });
  const events: Array<{ type: EventType; data: Record<string, unknown> }> = [];
  app.events.listen((type, data) => {
    if (type === 'decision') events.push({ type, data: data as Record<string, unknown> });
  });
  const receiver = await startReceiver(t);
  await addChannel(app, {
    name: 'sec',
    type: 'webhook',
    config: { url: receiver.url },
    categories: ['security'],
    min_severity: 'info',
  });
  const titles = () => receiver.received.map((request) => JSON.parse(request.body) as Record<string, string>);

  const added = await app.inject({
    method: 'POST',
    url: '/api/ip/decisions',
    payload: { value: '192.0.2.77', duration: '2h', reason: 'manual test' },
  });
  t.is(added.statusCode, 201, added.body);
  const id = added.json().decisions[0].id as number;
  const deleted = await app.inject({ method: 'DELETE', url: `/api/ip/decisions/${id}` });
  t.is(deleted.statusCode, 204, deleted.body);
  const again = await app.inject({ method: 'POST', url: '/api/ip/decisions', payload: { value: '192.0.2.78' } });
  t.is(again.statusCode, 201, again.body);
  const unban = await app.inject({ method: 'POST', url: '/api/ip/unban', payload: { ip: '192.0.2.78' } });
  t.is(unban.statusCode, 200, unban.body);
  t.is(unban.json().deleted, 1);
  // an unban that deleted nothing is no news
  const none = await app.inject({ method: 'POST', url: '/api/ip/unban', payload: { ip: '192.0.2.79' } });
  t.is(none.json().deleted, 0);
  // a refused ban (bad value) neither
  const bad = await app.inject({ method: 'POST', url: '/api/ip/decisions', payload: { value: 'not-an-ip' } });
  t.is(bad.statusCode, 422);

  t.deepEqual(
    events.map((event) => event.data),
    [
      { action: 'added', value: '192.0.2.77', type: 'ban', duration: '2h', by: 'anonymous' },
      { action: 'deleted', value: '192.0.2.77', type: 'ban', duration: events[1]?.data.duration, by: 'anonymous' },
      { action: 'added', value: '192.0.2.78', type: 'ban', duration: '4h', by: 'anonymous' },
      { action: 'unbanned', value: '192.0.2.78', type: null, duration: null, by: 'anonymous' },
    ],
  );
  // a deletion tells the time the decision had left, as LAPI reports it
  t.regex(String(events[1]?.data.duration), /^1h59m/);
  await waitFor(() => receiver.received.length >= 4, 2_000);
  t.deepEqual(
    titles().map((body) => `${body.category} ${body.severity} ${body.title}`),
    [
      'security info Manual ban: 192.0.2.77',
      'security info Decision removed: ban on 192.0.2.77',
      'security info Manual ban: 192.0.2.78',
      'security info Unbanned: 192.0.2.78',
    ],
  );
  t.is(titles()[0].message, 'anonymous added a ban on 192.0.2.77 for 2h.');
  t.is(titles()[3].message, 'anonymous removed every decision on 192.0.2.78 (unban).');
  // no credential of the LAPI in any message
  for (const request of receiver.received) {
    t.false(request.body.includes(lapi!.env.CROWDSEC_BOUNCER_KEY));
    t.false(request.body.includes(lapi!.env.CROWDSEC_MACHINE_PASSWORD));
  }
  t.is(receiver.received.length, 4);
});

lapiTest('with tokens, the message names the operator token, never its secret', async (t) => {
  const { lapi } = t.context;
  const app = await build(t, {
    config: {
      ...crowdsecConfig(lapi!),
      auth: { mode: 'ops' },
      notifications: { tick_ms: 20, ...quietUpstream, crowdsec_digest_s: 86_400 },
    },
  });
  const operator = await app.auth.create('ops-alice', 'operator');
  if (operator === 'exists') throw new Error('token exists');
  const headers = { authorization: `Bearer ${operator.token}` };
  const seen: string[] = [];
  app.events.listen((type, data) => {
    if (type === 'decision') seen.push(JSON.stringify(data));
  });
  const receiver = await startReceiver(t);
  const channel = await app.inject({
    method: 'POST',
    url: '/api/notifications/channels',
    headers,
    payload: {
      name: 'sec',
      type: 'webhook',
      config: { url: receiver.url },
      categories: ['security'],
      min_severity: 'info',
    },
  });
  t.is(channel.statusCode, 201, channel.body);

  const added = await app.inject({
    method: 'POST',
    url: '/api/ip/decisions',
    headers,
    payload: { value: '198.51.100.0/24', type: 'captcha', duration: '30m' },
  });
  t.is(added.statusCode, 201, added.body);
  await waitFor(() => receiver.received.length >= 1, 2_000);
  const body = JSON.parse(receiver.received[0].body) as Record<string, string>;
  t.like(body, { category: 'security', severity: 'info', title: 'Manual captcha: 198.51.100.0/24' });
  t.is(body.message, 'ops-alice added a captcha on 198.51.100.0/24 for 30m.');
  t.deepEqual(
    seen.map((data) => JSON.parse(data)),
    [{ action: 'added', value: '198.51.100.0/24', type: 'captcha', duration: '30m', by: 'ops-alice' }],
  );
  t.false(receiver.received[0].body.includes(operator.token));
  t.false(seen[0].includes(operator.token));
});
