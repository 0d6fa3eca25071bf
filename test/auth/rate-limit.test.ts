/** Failed authentications are limited per client IP (API.md §2.3): 10 per 60 s, then 429 with Retry-After. */
import test from 'ava';
import { FailureLimiter } from '../../core/auth/rate-limit.ts';
import { build } from '../helpers/build.ts';
import { bearer, initialAdminToken } from './support.ts';

const ATTACKER = '203.0.113.7';
const BYSTANDER = '198.51.100.20';

test('after 10 failed tokens an IP presenting a bad token gets 429 with Retry-After; a valid token still works', async (t) => {
  let clock = new Date('2030-01-01T00:00:00.000Z');
  const app = await build(t, { now: () => clock });
  const admin = await initialAdminToken(app);
  const whoami = (remoteAddress: string, headers: Record<string, string> = {}) =>
    app.inject({ url: '/api/auth/whoami', remoteAddress, headers });

  // Malformed and unknown tokens both count.
  for (let i = 0; i < 5; i++) t.is((await whoami(ATTACKER, { authorization: `Basic ${i}` })).statusCode, 401);
  for (let i = 0; i < 5; i++) t.is((await whoami(ATTACKER, bearer(`smk_${String(i).repeat(43)}`))).statusCode, 401);

  clock = new Date('2030-01-01T00:00:15.000Z');
  const blocked = await whoami(ATTACKER, bearer(`smk_${'x'.repeat(43)}`));
  t.is(blocked.statusCode, 429, 'a further bad token is refused while blocked');
  t.is(blocked.json().id, 'rate_limited');
  t.is(blocked.headers['retry-after'], '45', 'seconds until the window ends');
  t.is((await whoami(ATTACKER, { authorization: 'junk' })).statusCode, 429, 'malformed credentials too');

  t.is(
    (await whoami(ATTACKER, bearer(admin))).statusCode,
    200,
    'a valid token is accepted during the lockout (API.md §2.3)',
  );
  t.is((await whoami(ATTACKER)).statusCode, 401, 'without a token the client still learns it needs one');
  t.is(
    (await app.inject({ url: '/api/health', remoteAddress: ATTACKER, headers: bearer('junk') })).statusCode,
    200,
    'open routes ignore the header',
  );
  t.is((await whoami(BYSTANDER, bearer(`smk_${'y'.repeat(43)}`))).statusCode, 401, 'another IP is not blocked');

  clock = new Date('2030-01-01T00:01:00.000Z');
  t.is((await whoami(ATTACKER, bearer(`smk_${'z'.repeat(43)}`))).statusCode, 401, 'the block ends with the window');
});

test('requests without a token do not count: anonymous probes behind one proxy IP never lock operators out', async (t) => {
  const app = await build(t, { now: () => new Date('2030-01-01T00:00:00.000Z') });
  const admin = await initialAdminToken(app);
  for (let i = 0; i < 12; i++)
    t.is((await app.inject({ url: '/api/system/plugins', remoteAddress: ATTACKER })).statusCode, 401);
  t.is(
    (await app.inject({ url: '/api/system/plugins', remoteAddress: ATTACKER, headers: bearer(admin) })).statusCode,
    200,
  );
  t.is(
    (await app.inject({ url: '/api/auth/whoami', remoteAddress: ATTACKER, headers: bearer(`smk_${'q'.repeat(43)}`) }))
      .statusCode,
    401,
    'a bad token after 12 anonymous requests is the first counted failure, not a lockout',
  );
});

test('failures on open routes do not count', async (t) => {
  const app = await build(t);
  const admin = await initialAdminToken(app);
  for (let i = 0; i < 20; i++)
    await app.inject({ url: '/api/health', remoteAddress: ATTACKER, headers: bearer('junk') });
  t.is(
    (await app.inject({ url: '/api/auth/whoami', remoteAddress: ATTACKER, headers: bearer(admin) })).statusCode,
    200,
  );
});

test('auth.max_failures and auth.failure_window_s are honoured', async (t) => {
  const app = await build(t, {
    config: { auth: { max_failures: 2, failure_window_s: 5 } },
    now: () => new Date('2030-01-01T00:00:00.000Z'),
  });
  await app.inject({ url: '/api/auth/whoami', remoteAddress: ATTACKER, headers: bearer('one') });
  await app.inject({ url: '/api/auth/whoami', remoteAddress: ATTACKER, headers: bearer('two') });
  const blocked = await app.inject({ url: '/api/auth/whoami', remoteAddress: ATTACKER, headers: bearer('anything') });
  t.is(blocked.statusCode, 429);
  t.is(blocked.headers['retry-after'], '5');
});

test('FailureLimiter opens a new window once the old one ends', (t) => {
  let now = 0;
  const limiter = new FailureLimiter(2, 1000, () => now);
  limiter.fail('a');
  now = 900;
  limiter.fail('a');
  t.is(limiter.retryAfter('a'), 1);
  now = 1000;
  t.is(limiter.retryAfter('a'), 0);
  limiter.fail('a');
  t.is(limiter.retryAfter('a'), 0, 'one failure in the new window');
});
