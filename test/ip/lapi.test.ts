/** IP group against a private real CrowdSec LAPI (TESTING.md "Real CrowdSec LAPI"). */
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import { APP_VERSION } from '../../core/version.ts';
import { CrowdSecClient } from '../../plugins/ip/crowdsec-client.ts';
import { build } from '../helpers/build.ts';
import { crowdsecConfig, cscli, useLapi, type Lapi } from '../helpers/crowdsec-lapi.ts';

const test = anyTest as TestFn<{ lapi?: Lapi }>;
const lapiTest = useLapi(test, 'CrowdSec LAPI tests', async (lapi) => {
  await cscli(lapi, 'decisions', 'add', '--ip', '192.0.2.66', '--duration', '1h');
  await cscli(lapi, 'decisions', 'add', '--ip', '2001:db8::66', '--duration', '2h');
  await cscli(lapi, 'decisions', 'add', '--range', '198.51.100.0/24', '--duration', '1h');
});

const app = (t: ExecutionContext<{ lapi?: Lapi }>, overrides: Record<string, unknown> = {}) =>
  build(t, { config: crowdsecConfig(t.context.lapi!, overrides) });

lapiTest('GET /api/ip/blocked/:ip reports an IPv4 ban with its decision', async (t) => {
  const res = await (await app(t)).inject({ url: '/api/ip/blocked/192.0.2.66' });
  t.is(res.statusCode, 200);
  const body = res.json();
  t.is(body.ip, '192.0.2.66');
  t.true(body.blocked);
  t.is(body.decisions.length, 1);
  const [d] = body.decisions;
  t.like(d, { type: 'ban', scope: 'Ip', value: '192.0.2.66', origin: 'cscli' });
  t.regex(d.duration, /^[0-9hms.]+$/);
  const untilMs = Date.parse(d.until) - Date.now();
  t.true(untilMs > 55 * 60_000 && untilMs <= 60 * 60_000, `until ${d.until}`);
  t.regex(d.until, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
});

lapiTest('GET /api/ip/blocked/:ip reports an IPv6 ban', async (t) => {
  const res = await (await app(t)).inject({ url: '/api/ip/blocked/2001:db8::66' });
  t.is(res.statusCode, 200);
  t.true(res.json().blocked);
  t.like(res.json().decisions[0], { scope: 'Ip', value: '2001:db8::66' });
});

lapiTest('GET /api/ip/blocked/:ip answers blocked false with [] for an IP without decisions (LAPI null)', async (t) => {
  const server = await app(t);
  for (const ip of ['203.0.113.9', '2001:db8::99']) {
    const res = await server.inject({ url: `/api/ip/blocked/${ip}` });
    t.is(res.statusCode, 200);
    t.deepEqual(res.json(), { ip, blocked: false, decisions: [] });
  }
});

lapiTest('GET /api/ip/blocked/:ip reports a range decision containing the IP', async (t) => {
  const res = await (await app(t)).inject({ url: '/api/ip/blocked/198.51.100.7' });
  t.is(res.statusCode, 200);
  t.true(res.json().blocked);
  t.like(res.json().decisions[0], { scope: 'Range', value: '198.51.100.0/24' });
});

lapiTest('GET /api/ip/security/:ip combines decisions, alerts and our allow-list middlewares', async (t) => {
  const server = await app(t);
  const create = (name: string, type: string, sourceRange: string[]) =>
    server.inject({ method: 'POST', url: '/api/middlewares', payload: { name, type, config: { sourceRange } } });
  t.is((await create('office', 'ipAllowList', ['192.0.2.0/24', '10.0.0.1'])).statusCode, 201);
  t.is((await create('legacy', 'ipWhiteList', ['192.0.2.66'])).statusCode, 201);
  t.is((await create('elsewhere', 'ipAllowList', ['203.0.113.0/24'])).statusCode, 201);
  t.is((await create('v6-net', 'ipAllowList', ['2001:db8::/32'])).statusCode, 201);

  const res = await server.inject({ url: '/api/ip/security/192.0.2.66' });
  t.is(res.statusCode, 200);
  const body = res.json();
  t.true(body.blocked);
  t.is(body.decisions[0].value, '192.0.2.66');
  t.deepEqual(body.allowlisted_by, ['legacy', 'office']);
  t.deepEqual(body.warnings, []);
  t.regex(body.checked_at, /Z$/);
  t.true(body.alerts.length >= 1);
  const [alert] = body.alerts;
  t.is(typeof alert.id, 'number');
  t.regex(alert.scenario, /manual 'ban'/);
  t.is(alert.events_count, 1);
  t.regex(alert.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.is(alert.source.ip, '192.0.2.66');

  const v6 = (await server.inject({ url: '/api/ip/security/2001:db8::66' })).json();
  t.deepEqual(v6.allowlisted_by, ['v6-net']);
  t.true(v6.blocked);
});

lapiTest('GET /api/ip/security/:ip without machine credentials answers alerts [] and a warning', async (t) => {
  const res = await (
    await app(t, { machine_id: '', machine_password: '' })
  ).inject({ url: '/api/ip/security/192.0.2.66' });
  t.is(res.statusCode, 200);
  t.true(res.json().blocked);
  t.deepEqual(res.json().alerts, []);
  t.is(res.json().warnings.length, 1);
  t.regex(res.json().warnings[0], /machine credentials/);
});

lapiTest(
  'GET /api/ip/security/:ip with a wrong machine password keeps decisions and warns without the password',
  async (t) => {
    const res = await (
      await app(t, { machine_password: 'wrong-Passw0rd-xyz' })
    ).inject({ url: '/api/ip/security/192.0.2.66' });
    t.is(res.statusCode, 200);
    t.true(res.json().blocked);
    t.deepEqual(res.json().alerts, []);
    t.regex(res.json().warnings[0], /CrowdSec LAPI rejected the machine login/);
    t.false(res.body.includes('wrong-Passw0rd-xyz'));
  },
);

lapiTest('a wrong bouncer key answers 502 naming the bouncer key, never its value', async (t) => {
  const server = await app(t, { bouncer_key: 'not-the-key-123' });
  for (const url of ['/api/ip/blocked/192.0.2.66', '/api/ip/security/192.0.2.66']) {
    const res = await server.inject({ url });
    t.is(res.statusCode, 502);
    t.is(res.json().id, 'upstream_unavailable');
    t.regex(res.json().message, /CrowdSec LAPI rejected the bouncer key/);
    t.false(res.body.includes('not-the-key-123'));
  }
});

lapiTest('POST /api/ip/unban deletes the decision on the IP and reports still_blocked false', async (t) => {
  const lapi = t.context.lapi!;
  await cscli(lapi, 'decisions', 'add', '--ip', '192.0.2.77', '--duration', '1h');
  const server = await app(t);
  const res = await server.inject({ method: 'POST', url: '/api/ip/unban', payload: { ip: '192.0.2.77' } });
  t.is(res.statusCode, 200);
  t.deepEqual(res.json(), { ip: '192.0.2.77', deleted: 1, still_blocked: false, effective_within_s: null });
  t.false((await server.inject({ url: '/api/ip/blocked/192.0.2.77' })).json().blocked);
  const again = await server.inject({ method: 'POST', url: '/api/ip/unban', payload: { ip: '192.0.2.77' } });
  t.deepEqual(again.json(), { ip: '192.0.2.77', deleted: 0, still_blocked: false, effective_within_s: null });
});

lapiTest('POST /api/ip/unban keeps a range ban containing the IP and reports still_blocked true', async (t) => {
  const lapi = t.context.lapi!;
  await cscli(lapi, 'decisions', 'add', '--ip', '198.51.100.8', '--duration', '1h');
  const server = await app(t);
  const res = await server.inject({ method: 'POST', url: '/api/ip/unban', payload: { ip: '198.51.100.8' } });
  t.is(res.statusCode, 200);
  t.deepEqual(res.json(), { ip: '198.51.100.8', deleted: 1, still_blocked: true, effective_within_s: null });
  const left = (await server.inject({ url: '/api/ip/blocked/198.51.100.8' })).json();
  t.deepEqual(
    left.decisions.map((d: { value: string }) => d.value),
    ['198.51.100.0/24'],
  );
});

lapiTest('POST /api/ip/unban of an IPv6 ban', async (t) => {
  const lapi = t.context.lapi!;
  await cscli(lapi, 'decisions', 'add', '--ip', '2001:db8::77', '--duration', '1h');
  const res = await (await app(t)).inject({ method: 'POST', url: '/api/ip/unban', payload: { ip: '2001:db8::77' } });
  t.deepEqual(res.json(), { ip: '2001:db8::77', deleted: 1, still_blocked: false, effective_within_s: null });
});

lapiTest('POST /api/ip/unban without machine credentials answers 503 not_configured', async (t) => {
  const res = await (
    await app(t, { machine_id: '', machine_password: '' })
  ).inject({ method: 'POST', url: '/api/ip/unban', payload: { ip: '192.0.2.66' } });
  t.is(res.statusCode, 503);
  t.is(res.json().id, 'not_configured');
  t.regex(res.json().message, /machine_id/);
});

lapiTest('POST /api/ip/unban with a wrong machine password answers 502 without the password', async (t) => {
  const res = await (
    await app(t, { machine_password: 'wrong-Passw0rd-xyz' })
  ).inject({ method: 'POST', url: '/api/ip/unban', payload: { ip: '192.0.2.66' } });
  t.is(res.statusCode, 502);
  t.regex(res.json().message, /CrowdSec LAPI rejected the machine login/);
  t.false(res.body.includes('wrong-Passw0rd-xyz'));
});

lapiTest('GET /api/health?deep=true reports crowdsec ok against the LAPI', async (t) => {
  const res = await (await app(t)).inject({ url: '/api/health?deep=true' });
  const crowdsec = res.json().checks.crowdsec;
  t.is(crowdsec.status, 'ok');
  t.is(crowdsec.error, null);
});

lapiTest('the client reuses its JWT and logs in again once when LAPI answers 401', async (t) => {
  const { env } = t.context.lapi!;
  const client = new CrowdSecClient({
    url: env.CROWDSEC_URL,
    bouncerKey: env.CROWDSEC_BOUNCER_KEY,
    machineId: env.CROWDSEC_MACHINE_ID,
    machinePassword: env.CROWDSEC_MACHINE_PASSWORD,
    timeoutMs: 5000,
    userAgent: `stack-manager/${APP_VERSION}`,
    now: () => new Date(),
  });
  const state = client as unknown as { token: { value: string; renewAt: number } | null };
  t.true((await client.alerts('192.0.2.66', 5)).length >= 1);
  const first = state.token;
  t.truthy(first);
  t.true(first!.renewAt > Date.now() + 50 * 60_000, 'renewed 60 s before the 1 h expire');
  await client.alerts('192.0.2.66', 5);
  t.is(state.token, first, 'cached token reused');
  // a token LAPI rejects (as after a LAPI restart with a new secret): one 401, one new login
  state.token = { value: `${first!.value}x`, renewAt: Number.MAX_SAFE_INTEGER };
  t.true((await client.alerts('192.0.2.66', 5)).length >= 1);
  t.not(state.token!.value, `${first!.value}x`);
});

lapiTest('a stopped LAPI answers 502 quickly naming CrowdSec', async (t) => {
  const server = await app(t, { timeout_ms: 10_000 });
  await t.context.lapi!.stop();
  t.context.lapi = undefined;
  const res = await server.inject({ url: '/api/ip/blocked/192.0.2.66' });
  t.is(res.statusCode, 502);
  t.regex(res.json().message, /CrowdSec LAPI at http:\/\/127\.0\.0\.1:\d+ is unreachable/);
  // refused at once, not waited out until timeout_ms (10 s): the cause says so, not a stopwatch
  t.notRegex(res.json().message, /did not answer|timeout/i);
});
