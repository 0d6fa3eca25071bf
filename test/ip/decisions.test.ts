/**
 * Decisions and the allowlist (API.md §4.23) against a private real CrowdSec LAPI: every write is
 * confirmed by reading the LAPI itself (cscli and the bouncer endpoint), not only our answers.
 */
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { APP_VERSION } from '../../core/version.ts';
import { CrowdSecClient } from '../../plugins/ip/crowdsec-client.ts';
import { build, tempDir } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';
import { crowdsecConfig, cscli, startLapi, useLapi, type Lapi } from '../helpers/crowdsec-lapi.ts';

const test = anyTest as TestFn<{ lapi?: Lapi }>;
const lapiTest = useLapi(test, 'CrowdSec decisions tests');

type Ctx = ExecutionContext<{ lapi?: Lapi }>;
const app = (t: Ctx, overrides: Record<string, unknown> = {}) =>
  build(t, { config: crowdsecConfig(t.context.lapi!, overrides) });

/** What the LAPI itself holds for a value (bouncer endpoint, the view Traefik's bouncer gets). */
async function lapiDecisions(t: Ctx, query: string): Promise<{ id: number; value: string; type: string }[]> {
  const { env } = t.context.lapi!;
  const res = await fetch(`${env.CROWDSEC_URL}/v1/decisions?${query}`, {
    headers: { 'x-api-key': env.CROWDSEC_BOUNCER_KEY },
  });
  return ((await res.json()) as { id: number; value: string; type: string }[] | null) ?? [];
}

/** A decision made by CrowdSec itself (as a scenario would): cscli through the LAPI. */
const lapiBan = (t: Ctx, flag: '--ip' | '--range', value: string, reason = 'crowdsecurity/test-bf') =>
  cscli(t.context.lapi!, 'decisions', 'add', flag, value, '--duration', '1h', '--reason', reason);

lapiTest('POST /api/ip/decisions bans an IP; the LAPI has it; GET lists it; DELETE removes it', async (t) => {
  const server = await app(t);
  const started = performance.now();
  const res = await server.inject({
    method: 'POST',
    url: '/api/ip/decisions',
    payload: { value: '192.0.2.41', duration: '2h', reason: 'manual test ban' },
  });
  const addMs = performance.now() - started;
  t.is(res.statusCode, 201, res.body);
  const body = res.json();
  t.is(body.effective_within_s, null, 'no bouncer middleware of ours yet');
  t.is(body.decisions.length, 1);
  const [d] = body.decisions;
  t.like(d, { type: 'ban', scope: 'Ip', value: '192.0.2.41', origin: 'cscli', scenario: 'manual test ban' });
  t.false(d.simulated);
  const left = Date.parse(d.expires_at) - Date.now();
  t.true(left > 115 * 60_000 && left <= 120 * 60_000, d.expires_at);
  t.regex(res.headers.location as string, /^\/api\/ip\/decisions\?value=192\.0\.2\.41$/);

  const inLapi = await lapiDecisions(t, 'ip=192.0.2.41');
  t.deepEqual(
    inLapi.map((x) => [x.id, x.type]),
    [[d.id, 'ban']],
  );
  t.regex(await cscli(t.context.lapi!, 'decisions', 'list', '-o', 'raw'), /192\.0\.2\.41/);

  const list = await server.inject({ url: '/api/ip/decisions?value=192.0.2.41' });
  t.is(list.statusCode, 200);
  t.is(list.headers['x-total-count'], '1');
  t.is(list.json()[0].id, d.id);

  const started2 = performance.now();
  const del = await server.inject({ method: 'DELETE', url: `/api/ip/decisions/${d.id}` });
  const deleteMs = performance.now() - started2;
  t.is(del.statusCode, 204);
  t.is(del.headers['x-effective-within'], undefined, 'unknown without a bouncer middleware');
  t.deepEqual(await lapiDecisions(t, 'ip=192.0.2.41'), []);
  t.log(`ban round trip ${addMs.toFixed(1)} ms, delete ${deleteMs.toFixed(1)} ms (real LAPI)`);

  // warm figures: the JWT is cached now
  const times: number[] = [];
  for (let i = 0; i < 10; i++) {
    const begin = performance.now();
    const ban = await server.inject({
      method: 'POST',
      url: '/api/ip/decisions',
      payload: { value: `192.0.2.${100 + i}` },
    });
    times.push(performance.now() - begin);
    t.is(ban.statusCode, 201);
    await server.inject({ method: 'DELETE', url: `/api/ip/decisions/${ban.json().decisions[0].id}` });
  }
  times.sort((a, b) => a - b);
  t.log(`warm ban round trip over 10: median ${times[5].toFixed(1)} ms, max ${times[9].toFixed(1)} ms`);

  const again = await server.inject({ method: 'DELETE', url: `/api/ip/decisions/${d.id}` });
  t.is(again.statusCode, 404);
  t.is((await server.inject({ method: 'DELETE', url: '/api/ip/decisions/987654' })).statusCode, 404);
});

lapiTest('a captcha on an IPv6 range; filters by scope, type, origin and scenario; paging headers', async (t) => {
  const server = await app(t);
  const res = await server.inject({
    method: 'POST',
    url: '/api/ip/decisions',
    payload: { value: '2001:db8:42::/48', type: 'captcha', duration: '30m' },
  });
  t.is(res.statusCode, 201, res.body);
  t.like(res.json().decisions[0], {
    type: 'captcha',
    scope: 'Range',
    value: '2001:db8:42::/48',
    scenario: "manual 'captcha' from 'stack-manager'",
  });
  const inLapi = await lapiDecisions(t, 'ip=2001:db8:42::7');
  t.is(inLapi[0]?.type, 'captcha', 'the LAPI applies the range to addresses inside it');
  await lapiBan(t, '--ip', '192.0.2.42', 'crowdsecurity/paging-bf');
  await lapiBan(t, '--ip', '192.0.2.43', 'crowdsecurity/paging-bf');

  const ranges = (await server.inject({ url: '/api/ip/decisions?scope=range' })).json();
  t.deepEqual(
    ranges.map((d: { value: string }) => d.value),
    ['2001:db8:42::/48'],
  );
  const captchas = (await server.inject({ url: '/api/ip/decisions?type=captcha&origin=cscli' })).json();
  t.is(captchas.length, 1);
  const bf = await server.inject({ url: '/api/ip/decisions?scenario=crowdsecurity/paging-bf&page=1&page_size=1' });
  t.is(bf.headers['x-total-count'], '2');
  t.is(bf.json().length, 1);
  t.regex(bf.headers.link as string, /page=2&page_size=1>; rel="next"/);
  t.regex(bf.headers.link as string, /scenario=crowdsecurity%2Fpaging-bf/);
  const all = (await server.inject({ url: '/api/ip/decisions' })).json() as { id: number }[];
  t.deepEqual(
    all.map((d) => d.id),
    [...all.map((d) => d.id)].sort((a, b) => a - b),
    'sorted by id',
  );
  const bad = await server.inject({ url: '/api/ip/decisions?scope=user' });
  t.is(bad.statusCode, 422);
});

lapiTest('bad input answers 422 naming the field and sends nothing to the LAPI', async (t) => {
  const server = await app(t);
  const before = await cscli(t.context.lapi!, 'alerts', 'list', '-o', 'raw', '--limit', '0');
  const cases: [Record<string, unknown>, string][] = [
    [{ value: '999.1.1.1' }, '/value'],
    [{ value: 'example.com' }, '/value'],
    [{ value: '192.0.2.0/33' }, '/value'],
    [{ value: '192.0.2.1/24' }, '/value'],
    [{ value: '2001:db8::1/48' }, '/value'],
    [{ value: '192.0.2.1', duration: '30s' }, '/duration'],
    [{ value: '192.0.2.1', duration: '8761h' }, '/duration'],
    [{ value: '192.0.2.1', duration: '4 hours' }, '/duration'],
    [{ value: '192.0.2.1', duration: '-1h' }, '/duration'],
    [{ value: '192.0.2.1', type: 'throttle' }, '/type'],
    [{ value: '192.0.2.1', reason: 'x'.repeat(201) }, '/reason'],
    [{ value: '192.0.2.1', reason: 'line\nbreak' }, '/reason'],
    [{ value: 42 }, '/value'],
    [{}, '/value'],
  ];
  for (const [payload, pointer] of cases) {
    const res = await server.inject({ method: 'POST', url: '/api/ip/decisions', payload });
    t.is(res.statusCode, 422, JSON.stringify(payload));
    t.is(res.json().id, 'validation_failed');
    t.is(res.json().details[0].path, pointer, JSON.stringify(payload));
  }
  const hostBits = await server.inject({
    method: 'POST',
    url: '/api/ip/decisions',
    payload: { value: '192.0.2.1/24' },
  });
  t.regex(hostBits.json().message, /host bits set: the range is 192\.0\.2\.0\/24/);
  t.is(
    await cscli(t.context.lapi!, 'alerts', 'list', '-o', 'raw', '--limit', '0'),
    before,
    'no alert reached the LAPI',
  );
});

lapiTest('without machine credentials: 503 not_configured for add and delete', async (t) => {
  const server = await app(t, { machine_id: '', machine_password: '' });
  const add = await server.inject({ method: 'POST', url: '/api/ip/decisions', payload: { value: '192.0.2.44' } });
  t.is(add.statusCode, 503);
  t.is(add.json().id, 'not_configured');
  t.regex(add.json().message, /machine_id/);
  t.is((await server.inject({ method: 'DELETE', url: '/api/ip/decisions/1' })).statusCode, 503);
});

lapiTest('effective_within_s follows our CrowdSec bouncer middleware (stream, live, none)', async (t) => {
  const server = await app(t);
  const bouncer = (mode: string) => ({
    crowdsec: {
      enabled: true,
      crowdsecMode: mode,
      crowdsecLapiKey: 'k',
      updateIntervalSeconds: 15,
      defaultDecisionSeconds: 45,
    },
  });
  const created = await server.inject({
    method: 'POST',
    url: '/api/middlewares',
    payload: { id: 'bouncer', name: 'bouncer', type: 'plugin', config: bouncer('stream') },
  });
  t.is(created.statusCode, 201, created.body);
  const ban = await server.inject({ method: 'POST', url: '/api/ip/decisions', payload: { value: '192.0.2.45' } });
  t.is(ban.json().effective_within_s, 15);
  t.is(ban.headers['x-effective-within'], '15');
  const unban = await server.inject({ method: 'POST', url: '/api/ip/unban', payload: { ip: '192.0.2.45' } });
  t.like(unban.json(), { deleted: 1, effective_within_s: 15 });

  const put = (mode: string) =>
    server.inject({
      method: 'PUT',
      url: '/api/middlewares/bouncer',
      payload: { name: 'bouncer', type: 'plugin', config: bouncer(mode) },
    });
  t.is((await put('live')).statusCode, 200);
  const live = await server.inject({ method: 'POST', url: '/api/ip/decisions', payload: { value: '192.0.2.46' } });
  t.is(live.json().effective_within_s, 45);
  const del = await server.inject({ method: 'DELETE', url: `/api/ip/decisions/${live.json().decisions[0].id}` });
  t.is(del.headers['x-effective-within'], '45');
  t.is((await put('none')).statusCode, 200);
  const none = await server.inject({ method: 'POST', url: '/api/ip/unban', payload: { ip: '192.0.2.46' } });
  t.is(none.json().effective_within_s, 0);
});

lapiTest('an allowlist entry removes existing decisions at once, refuses bans, and its file is written', async (t) => {
  const dir = await tempDir(t);
  const dataDir = path.join(dir, 'data');
  const server = await build(t, { dataDir, config: crowdsecConfig(t.context.lapi!) });
  await lapiBan(t, '--ip', '203.0.113.10');
  await lapiBan(t, '--ip', '203.0.113.11');
  await lapiBan(t, '--ip', '203.0.113.99'); // outside the entry
  const res = await server.inject({
    method: 'POST',
    url: '/api/ip/allowlist',
    payload: { value: '203.0.113.0/28', reason: 'roaming phone', ttl: '24h' },
  });
  t.is(res.statusCode, 201, res.body);
  const entry = res.json();
  t.like(entry, { value: '203.0.113.0/28', reason: 'roaming phone', created_by: 'anonymous', removed_decisions: 2 });
  t.deepEqual(entry.removed.map((d: { value: string }) => d.value).sort(), ['203.0.113.10', '203.0.113.11']);
  t.true(Math.abs(Date.parse(entry.expires_at) - Date.now() - 24 * 3_600_000) < 60_000);
  t.is(res.headers.location, `/api/ip/allowlist/${entry.id}`);
  t.deepEqual(await lapiDecisions(t, 'ip=203.0.113.10'), []);
  t.deepEqual(await lapiDecisions(t, 'ip=203.0.113.11'), []);
  t.is((await lapiDecisions(t, 'ip=203.0.113.99')).length, 1, 'outside the entry: kept');

  const file = await readFile(path.join(dataDir, 'crowdsec', 'allowlist.yaml'), 'utf8');
  t.regex(file, /value: 203\.0\.113\.0\/28/);
  const list = await server.inject({ url: '/api/ip/allowlist' });
  t.is(list.headers['x-total-count'], '1');
  t.like(list.json()[0], { id: entry.id, removed_decisions: 2 });

  for (const value of ['203.0.113.5', '203.0.113.0/24']) {
    const ban = await server.inject({ method: 'POST', url: '/api/ip/decisions', payload: { value } });
    t.is(ban.statusCode, 409, value);
    t.is(ban.json().id, 'allowlisted');
    t.regex(ban.json().message, new RegExp(entry.id));
  }
  t.deepEqual(await lapiDecisions(t, 'ip=203.0.113.5'), [], 'nothing sent');

  // IPv6: a range entry removes an address and a smaller range inside it, not the larger one around it
  await lapiBan(t, '--ip', '2001:db8:77::5');
  await lapiBan(t, '--range', '2001:db8:77:1::/64');
  await lapiBan(t, '--range', '2001:db8::/32');
  const v6 = await server.inject({ method: 'POST', url: '/api/ip/allowlist', payload: { value: '2001:db8:77::/48' } });
  t.is(v6.statusCode, 201, v6.body);
  t.deepEqual(
    v6
      .json()
      .removed.map((d: { value: string }) => d.value)
      .sort(),
    ['2001:db8:77:1::/64', '2001:db8:77::5'],
  );
  t.deepEqual(
    (await lapiDecisions(t, 'ip=2001:db8:77::5')).map((d) => d.value),
    ['2001:db8::/32'],
  );
  t.is((await server.inject({ method: 'DELETE', url: `/api/ip/allowlist/${v6.json().id}` })).statusCode, 204);

  t.is((await server.inject({ method: 'DELETE', url: `/api/ip/allowlist/${entry.id}` })).statusCode, 204);
  t.is((await server.inject({ method: 'DELETE', url: `/api/ip/allowlist/${entry.id}` })).statusCode, 404);
  const ban = await server.inject({ method: 'POST', url: '/api/ip/decisions', payload: { value: '203.0.113.5' } });
  t.is(ban.statusCode, 201, 'allowed again once the entry is gone');
});

lapiTest('the sweep removes a decision the LAPI creates after the entry', async (t) => {
  // a short sweep for the test: the default is 10 s
  const fast = await app(t, { allowlist_sweep_s: 1 });
  const entry = await fast.inject({ method: 'POST', url: '/api/ip/allowlist', payload: { value: '198.18.0.7' } });
  t.is(entry.statusCode, 201, entry.body);
  t.is(entry.json().expires_at, null);
  await lapiBan(t, '--ip', '198.18.0.7');
  const created = performance.now();
  t.is((await lapiDecisions(t, 'ip=198.18.0.7')).length, 1, 'the LAPI made the decision');
  await waitFor(async () => (await lapiDecisions(t, 'ip=198.18.0.7')).length === 0, 2000, 50);
  t.log(`sweep removed the new decision ${(performance.now() - created).toFixed(0)} ms after it was made (sweep 1 s)`);
  const list = await waitFor(async () => {
    const [e] = (await fast.inject({ url: '/api/ip/allowlist' })).json();
    return e.removed_decisions === 1 ? e : null;
  }, 1000);
  t.is(list.value, '198.18.0.7');
});

lapiTest('an entry with a TTL expires by itself (injected clock) and stops protecting', async (t) => {
  let now = Date.now();
  const dir = await tempDir(t);
  const dataDir = path.join(dir, 'data');
  const server = await build(t, {
    dataDir,
    now: () => new Date(now),
    config: crowdsecConfig(t.context.lapi!, { allowlist_sweep_s: 1 }),
  });
  const res = await server.inject({
    method: 'POST',
    url: '/api/ip/allowlist',
    payload: { value: '198.18.1.1', ttl: '1h' },
  });
  t.is(res.statusCode, 201);
  t.is(
    (await server.inject({ method: 'POST', url: '/api/ip/decisions', payload: { value: '198.18.1.1' } })).statusCode,
    409,
  );
  now += 3_600_000 + 1000;
  t.deepEqual((await server.inject({ url: '/api/ip/allowlist' })).json(), [], 'gone from the list at once');
  const ban = await server.inject({ method: 'POST', url: '/api/ip/decisions', payload: { value: '198.18.1.1' } });
  t.is(ban.statusCode, 201, 'no longer refused');
  const file = path.join(dataDir, 'crowdsec', 'allowlist.yaml');
  await waitFor(async () => !(await readFile(file, 'utf8')).includes('198.18.1.1'), 2000, 50);
  t.is((await lapiDecisions(t, 'ip=198.18.1.1')).length, 1, 'an expired entry removes nothing');
});

lapiTest('allowlist input: bad values and TTLs answer 422 and write nothing', async (t) => {
  const dir = await tempDir(t);
  const dataDir = path.join(dir, 'data');
  const server = await build(t, { dataDir, config: crowdsecConfig(t.context.lapi!) });
  for (const [payload, pointer] of [
    [{ value: '10.0.0.1/8' }, '/value'],
    [{ value: 'nope' }, '/value'],
    [{ value: '10.0.0.1', ttl: '10s' }, '/ttl'],
    [{ value: '10.0.0.1', ttl: 'forever' }, '/ttl'],
    [{ value: '10.0.0.1', reason: 'r'.repeat(201) }, '/reason'],
  ] as [Record<string, unknown>, string][]) {
    const res = await server.inject({ method: 'POST', url: '/api/ip/allowlist', payload });
    t.is(res.statusCode, 422, JSON.stringify(payload));
    t.is(res.json().details[0].path, pointer);
  }
  await t.throwsAsync(readFile(path.join(dataDir, 'crowdsec', 'allowlist.yaml')), { code: 'ENOENT' });
});

lapiTest('the LAPI down: 502 naming CrowdSec, no allowlist entry written', async (t) => {
  const dir = await tempDir(t);
  const dataDir = path.join(dir, 'data');
  const lapi = await startLapi();
  const server = await build(t, { dataDir, config: crowdsecConfig(lapi) });
  await lapi.stop();
  for (const [method, url, payload] of [
    ['GET', '/api/ip/decisions', undefined],
    ['POST', '/api/ip/decisions', { value: '192.0.2.50' }],
    ['DELETE', '/api/ip/decisions/1', undefined],
    ['POST', '/api/ip/allowlist', { value: '192.0.2.50' }],
  ] as const) {
    const res = await server.inject({ method, url, payload });
    t.is(res.statusCode, 502, `${method} ${url}`);
    t.is(res.json().id, 'upstream_unavailable');
    t.regex(res.json().message, /CrowdSec LAPI at http:\/\/127\.0\.0\.1:\d+ is unreachable/);
  }
  t.deepEqual((await server.inject({ url: '/api/ip/allowlist' })).json(), []);
  await t.throwsAsync(readFile(path.join(dataDir, 'crowdsec', 'allowlist.yaml')), { code: 'ENOENT' });
});

lapiTest('hand edits of allowlist.yaml: a bad file is reported and ignored, a good one is enforced', async (t) => {
  const dir = await tempDir(t);
  const dataDir = path.join(dir, 'data');
  const server = await build(t, { dataDir, config: crowdsecConfig(t.context.lapi!, { allowlist_sweep_s: 1 }) });
  const first = await server.inject({ method: 'POST', url: '/api/ip/allowlist', payload: { value: '198.18.2.1' } });
  t.is(first.statusCode, 201);
  const file = path.join(dataDir, 'crowdsec', 'allowlist.yaml');
  await mkdir(path.dirname(file), { recursive: true });
  // written by rename, as editors do
  const save = async (text: string) => {
    await writeFile(`${file}.edit`, text);
    await rename(`${file}.edit`, file);
  };
  await save('entries:\n  - id: by-hand\n    value: 198.18.2.0/33\n');
  const invalid = await waitFor(async () => {
    const status = (await server.inject({ url: '/api/proxy-config/status' })).json();
    return (status.invalid_files as { path: string; message: string }[]).find((f) => f.path.includes('allowlist.yaml'));
  }, 1000);
  t.regex(invalid.message, /prefix length outside 0–32/);
  t.deepEqual(
    (await server.inject({ url: '/api/ip/allowlist' })).json().map((e: { value: string }) => e.value),
    ['198.18.2.1'],
    'the last valid version stays in effect',
  );

  await lapiBan(t, '--ip', '198.18.2.9');
  await save('# phones of the team\nentries:\n  - id: by-hand\n    value: 198.18.2.8/29\n    reason: team phones\n');
  const listed = await waitFor(async () => {
    const entries = (await server.inject({ url: '/api/ip/allowlist' })).json();
    return entries.length === 1 && entries[0].id === 'by-hand' ? entries[0] : null;
  }, 1000);
  t.like(listed, { value: '198.18.2.8/29', reason: 'team phones', created_by: 'gitops', expires_at: null });
  await waitFor(async () => (await lapiDecisions(t, 'ip=198.18.2.9')).length === 0, 2000, 50);
  await waitFor(async () => (await readFile(file, 'utf8')).includes('removed_decisions: 1'), 2000, 50);
  t.regex(await readFile(file, 'utf8'), /^# phones of the team/, 'the comment is kept when the sweep counts');
});

/** The installed CrowdSec's version ([major, minor, patch]), from `crowdsec -version`. */
function crowdsecVersion(): number[] {
  // it prints on stderr
  const run = spawnSync('crowdsec', ['-version'], { encoding: 'utf8' });
  const text = `${run.stdout}${run.stderr}`;
  const match = /version: v(\d+)\.(\d+)\.(\d+)/.exec(text);
  return match ? match.slice(1).map(Number) : [0, 0, 0];
}

lapiTest('LAPI allowlists are detected by version (≥ 1.6.8 has GET /v1/allowlists; 1.4.6 answers 404)', async (t) => {
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
  const [major, minor, patch] = crowdsecVersion();
  const newer = major > 1 || (major === 1 && (minor > 6 || (minor === 6 && patch >= 8)));
  if (!newer) t.log(`CrowdSec ${major}.${minor}.${patch}: no LAPI allowlists; the sweep alone enforces entries`);
  t.is(await client.hasAllowlists(), newer);
});
