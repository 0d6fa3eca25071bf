/** Which Traefik instance polls which document: the status `targets` list (real sockets, two fake pollers). */
import test from 'ava';
import { waitFor } from '../helpers/wait.ts';
import { JELLYFIN } from '../resources/support.ts';
import { MAX_POLLERS_PER_DOCUMENT, POLLER_WINDOW_MS, PollerLog } from '../../plugins/proxy-config/targets/pollers.ts';
import { client, targetHarness } from './targets-support.ts';

test('two Traefik instances polling two targets get different documents; the status shows each as current, then the one behind', async (t) => {
  const h = await targetHarness(t);
  for (const body of [
    { name: 'Paris', exclude: { resources: [JELLYFIN] } },
    { name: 'Berlin', include: { hosts: ['media.example.com'] }, entrypoints: { websecure: 'https' } },
  ])
    t.is((await h.call('POST', '/api/proxy-config/targets', body)).status, 201);
  const paris = client(h.base, { 'user-agent': 'Traefik/3.1.2 paris', 'accept-encoding': 'gzip' });
  const berlin = client(h.base, { 'user-agent': 'Traefik/3.1.2 berlin', 'accept-encoding': 'gzip' });
  const poll = async (who: typeof paris, url: string, etag?: string) =>
    who.call('GET', url, undefined, etag ? { 'if-none-match': etag } : {});
  const parisFirst = await waitFor(async () => {
    const res = await poll(paris, '/api/v1/proxy-config/paris');
    return res.status === 200 ? res : null;
  }, 200);
  const berlinFirst = await waitFor(async () => {
    const res = await poll(berlin, '/api/v1/proxy-config?target=berlin');
    return res.status === 200 ? res : null;
  }, 200);
  t.not(parisFirst.headers.etag, berlinFirst.headers.etag);
  t.notDeepEqual(Object.keys(parisFirst.json.http.routers), Object.keys(berlinFirst.json.http.routers));
  t.true(Object.keys(berlinFirst.json.http.routers).every((r) => r.startsWith('6-Jellyfin')));
  await poll(h, '/api/v1/proxy-config');

  const status = (await h.call('GET', '/api/proxy-config/status')).json;
  t.deepEqual(
    status.targets.map((x: { id: string }) => x.id),
    ['default', 'berlin', 'paris'],
  );
  const byId = (s: any, id: string) => s.targets.find((x: { id: string }) => x.id === id);
  t.like(byId(status, 'paris'), { etag: (parisFirst.headers.etag as string).slice(1, -1) });
  t.like(byId(status, 'paris').instances[0], {
    remote_address: '127.0.0.1',
    user_agent: 'Traefik/3.1.2 paris',
    current: true,
  });
  t.is(byId(status, 'paris').instances.length, 1);
  t.like(byId(status, 'berlin').instances[0], { user_agent: 'Traefik/3.1.2 berlin', current: true });
  t.is(byId(status, 'berlin').instances.length, 1);
  t.is(byId(status, 'default').instances.length, 1, 'the default document has its own instances');
  t.false('token_name' in byId(status, 'paris').instances[0], 'no token used');
  t.true(Date.parse(byId(status, 'paris').instances[0].last_poll) > 0);

  // Berlin's target changes; Paris polls (304: still current), Berlin has not polled since
  const put = await h.call('PUT', '/api/proxy-config/targets/berlin', {
    name: 'Berlin',
    include: { hosts: ['media.example.com', 'cloud.example.com'] },
  });
  t.is(put.status, 200);
  const behind = await waitFor(async () => {
    const s = (await h.call('GET', '/api/proxy-config/status')).json;
    return byId(s, 'berlin').etag !== (berlinFirst.headers.etag as string).slice(1, -1) ? s : null;
  }, 200);
  const notModified = await poll(paris, '/api/v1/proxy-config/paris', parisFirst.headers.etag as string);
  t.is(notModified.status, 304);
  const after = (await h.call('GET', '/api/proxy-config/status')).json;
  t.like(byId(after, 'berlin').instances[0], { user_agent: 'Traefik/3.1.2 berlin', current: false });
  t.like(byId(after, 'paris').instances[0], { user_agent: 'Traefik/3.1.2 paris', current: true });
  t.is(byId(behind, 'berlin').instances[0].current, false);

  // Berlin polls with its old ETag: it gets the new body and is current again
  const caughtUp = await poll(berlin, '/api/v1/proxy-config/berlin', berlinFirst.headers.etag as string);
  t.is(caughtUp.status, 200);
  t.true(Object.keys(caughtUp.json.http.routers).includes('1-Nextcloud-router'));
  const last = (await h.call('GET', '/api/proxy-config/status')).json;
  t.like(byId(last, 'berlin').instances[0], { current: true });

  // a deleted target leaves the list with its instances
  t.is((await h.call('DELETE', '/api/proxy-config/targets/berlin')).status, 204);
  const deleted = await waitFor(async () => {
    const s = (await h.call('GET', '/api/proxy-config/status')).json;
    return s.targets.every((x: { id: string }) => x.id !== 'berlin') ? s : null;
  }, 100);
  t.deepEqual(
    deleted.targets.map((x: { id: string }) => x.id),
    ['default', 'paris'],
  );
  t.is((await poll(berlin, '/api/v1/proxy-config/berlin')).status, 404);
});

test('the poller log keeps instances for 10 minutes, at most 1000 per document, dropping the one polled longest ago', (t) => {
  let now = 1_000_000;
  const log = new PollerLog(() => now);
  const poll = (n: number, etag: string, yaml = false) =>
    log.seen('edge', `10.0.0.${n % 250}`, `Traefik ${n}`, null, etag, yaml);
  for (let n = 0; n < MAX_POLLERS_PER_DOCUMENT + 5; n++) {
    poll(n, '"a"');
    now += 1;
  }
  poll(5, '"b"'); // polled again: now among the most recent, so not the next one evicted
  now += 1;
  poll(99_999, '"a"', true);
  const all = log.instances('edge', (yaml) => (yaml ? '"y"' : '"a"'));
  t.is(all.length, MAX_POLLERS_PER_DOCUMENT);
  t.deepEqual(
    all.slice(0, 3).map((i) => [i.user_agent, i.current]),
    [
      ['Traefik 99999', false],
      ['Traefik 5', false],
      ['Traefik 1004', true],
    ],
    'latest first; current compares the ETag of the format it polled',
  );
  t.false(
    all.some((i) => ['Traefik 0', 'Traefik 4', 'Traefik 6'].includes(i.user_agent)),
    'the oldest were dropped',
  );
  t.true(all.some((i) => i.user_agent === 'Traefik 7'));
  t.is(log.instances('other', () => '"a"').length, 0);
  t.is(log.instances('edge', null)[0].current, false, 'no current document: nobody is current');

  now += POLLER_WINDOW_MS - 1;
  t.deepEqual(
    log.instances('edge', () => '"a"').map((i) => i.user_agent),
    ['Traefik 99999', 'Traefik 5'],
    'only those seen in the last 10 minutes',
  );
  now += 2;
  t.is(log.instances('edge', () => '"a"').length, 0);
});

test('each instance counts its polls by answer status: 200, 304 and 502 (no document yet), so polls need no log line (API.md §2.11)', (t) => {
  const log = new PollerLog(() => 1_000_000);
  for (let i = 0; i < 3; i++) log.unavailable('default', '10.0.0.1', 'Traefik a', null);
  t.deepEqual(
    log.instances('default', () => '"a"').map((i) => [i.current, i.polls]),
    [[false, { '200': 0, '304': 0, '401': 0, '502': 3 }]],
    'listed while answered 502, never current',
  );
  log.seen('default', '10.0.0.1', 'Traefik a', null, '"a"', false);
  log.seen('default', '10.0.0.1', 'Traefik a', null, '"a"', false, true);
  log.seen('default', '10.0.0.1', 'Traefik a', null, '"a"', false, true);
  log.unavailable('default', '10.0.0.2', 'Traefik b', 'edge-token');
  t.deepEqual(
    log.instances('default', () => '"a"').map((i) => [i.user_agent, i.current, i.polls]),
    [
      ['Traefik a', true, { '200': 1, '304': 2, '401': 0, '502': 3 }],
      ['Traefik b', false, { '200': 0, '304': 0, '401': 0, '502': 1 }],
    ],
  );
  // GET /metrics keeps its 200/304 series only
  t.deepEqual(log.counts(), [
    { target: 'default', instance: '10.0.0.1', status: '200', count: 1 },
    { target: 'default', instance: '10.0.0.1', status: '304', count: 2 },
  ]);
});

test('an instance polling with an API token (provider.token set) is listed with the token name; one with provider.token without', async (t) => {
  const h = await targetHarness(t, { config: { provider: { token: 'provider-secret' } } });
  const created = await h.call('POST', '/api/auth/tokens', { name: 'traefik-lyon', role: 'viewer' });
  t.is(created.status, 201, created.text);
  t.is((await h.call('POST', '/api/proxy-config/targets', { name: 'Lyon' })).status, 201);
  const lyon = client(h.base, { 'user-agent': 'Traefik lyon', authorization: `Bearer ${created.json.token}` });
  const shared = client(h.base, { 'user-agent': 'Traefik shared', authorization: 'Bearer provider-secret' });
  t.is((await h.call('GET', '/api/v1/proxy-config/lyon')).status, 401, 'provider.token set: a token is needed');
  await waitFor(async () => (await lyon.call('GET', '/api/v1/proxy-config/lyon')).status === 200, 200);
  t.is((await shared.call('GET', '/api/v1/proxy-config/lyon')).status, 200);
  const status = (await h.call('GET', '/api/proxy-config/status')).json;
  const instances = status.targets.find((x: { id: string }) => x.id === 'lyon').instances;
  t.deepEqual(
    instances
      .filter((i: { user_agent: string }) => i.user_agent !== '')
      .map((i: { user_agent: string; token_name?: string }) => [i.user_agent, i.token_name]),
    [
      ['Traefik shared', undefined],
      ['Traefik lyon', 'traefik-lyon'],
    ],
  );
  t.like(
    instances.find((i: { user_agent: string }) => i.user_agent === ''),
    { current: false, polls: { '200': 0, '401': 1 } },
    'the request without a token (no User-Agent) is listed as refused',
  );
});

test('a Traefik refused with 401 (wrong or missing token) is listed with polls["401"], not current; with the right token its 200s count on the same instance', async (t) => {
  const h = await targetHarness(t, { config: { provider: { token: 'provider-secret' } } });
  t.is((await h.call('POST', '/api/proxy-config/targets', { name: 'Nantes' })).status, 201);
  const wrong = client(h.base, { 'user-agent': 'Traefik nantes', authorization: 'Bearer not-the-secret' });
  const missing = client(h.base, { 'user-agent': 'Traefik anonymous' });
  const right = client(h.base, { 'user-agent': 'Traefik nantes', authorization: 'Bearer provider-secret' });
  const instancesOf = async (id: string) =>
    (await h.call('GET', '/api/proxy-config/status')).json.targets.find((x: { id: string }) => x.id === id).instances;

  for (let i = 0; i < 3; i++) t.is((await wrong.call('GET', '/api/v1/proxy-config/nantes')).status, 401);
  t.is((await missing.call('GET', '/api/v1/proxy-config?target=nantes')).status, 401, 'target in the query');
  t.is((await missing.call('GET', '/api/v1/proxy-config')).status, 401, 'the default document');
  t.is((await wrong.call('GET', '/api/v1/proxy-config/no-such-target')).status, 401);
  let nantes = await instancesOf('nantes');
  t.deepEqual(
    nantes
      .map((i: any) => [i.remote_address, i.user_agent, i.token_name, i.current, i.polls])
      .sort((a: string[], b: string[]) => a[1].localeCompare(b[1])),
    [
      ['127.0.0.1', 'Traefik anonymous', undefined, false, { '200': 0, '304': 0, '401': 1, '502': 0 }],
      ['127.0.0.1', 'Traefik nantes', undefined, false, { '200': 0, '304': 0, '401': 3, '502': 0 }],
    ],
  );
  t.like((await instancesOf('default'))[0], {
    user_agent: 'Traefik anonymous',
    current: false,
    polls: { '200': 0, '304': 0, '401': 1, '502': 0 },
  });
  t.is((await h.call('GET', '/api/proxy-config/status')).json.targets.length, 2, 'an unknown target is not recorded');

  // the right token: served (once the first document exists), counted on the same instance
  await waitFor(async () => (await right.call('GET', '/api/v1/proxy-config/nantes')).status === 200, 200);
  nantes = await instancesOf('nantes');
  const same = nantes.find((i: { user_agent: string }) => i.user_agent === 'Traefik nantes');
  t.is(nantes.length, 2);
  t.is(same.current, true);
  t.is(same.polls['401'], 3);
  t.true(same.polls['200'] >= 1);
  t.false('token_name' in same, 'provider.token has no name: the same entry as the refused polls');
  const before = same.polls;
  t.is((await right.call('GET', '/api/v1/proxy-config/nantes')).status, 200);
  const after = (await instancesOf('nantes')).find((i: { user_agent: string }) => i.user_agent === 'Traefik nantes');
  t.deepEqual(after.polls, { ...before, '200': before['200'] + 1 });
});
