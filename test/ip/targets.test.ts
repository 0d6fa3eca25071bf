/** Unit tests: decision/allowlist targets (ip-range.ts) and effective_within_s from bouncer middlewares (effective.ts). */
import test from 'ava';
import type { StoredObject } from '../../core/store/types.ts';
import type { MiddlewareData } from '../../plugins/middlewares/schemas.ts';
import { effectiveWithinS } from '../../plugins/ip/effective.ts';
import { contains, overlaps, parseTarget, type Target } from '../../plugins/ip/ip-range.ts';

const target = (value: string): Target => {
  const t = parseTarget(value);
  if ('error' in t) throw new Error(t.error);
  return t;
};

test('parseTarget reads addresses and canonical CIDR ranges, v4 and v6', (t) => {
  t.like(target('192.0.2.1'), { scope: 'Ip', version: 4, prefix: 32 });
  t.like(target('192.0.2.0/24'), { scope: 'Range', version: 4, prefix: 24 });
  t.like(target('2001:db8::/32'), { scope: 'Range', version: 6, prefix: 32 });
  t.like(target('::ffff:192.0.2.0/120'), { scope: 'Range', version: 6 });
  t.like(target('0.0.0.0/0'), { scope: 'Range', prefix: 0 });
});

test('parseTarget names the problem: host bits (with the network), prefix, garbage', (t) => {
  const error = (value: string) => (parseTarget(value) as { error: string }).error;
  t.regex(error('192.0.2.9/24'), /host bits set: the range is 192\.0\.2\.0\/24/);
  t.regex(error('2001:db8::1/32'), /the range is 2001:db8::\/32/);
  t.regex(error('192.0.2.0/33'), /prefix length outside 0–32/);
  t.regex(error('2001:db8::/129'), /0–128/);
  t.regex(error('192.0.2.0/x'), /prefix/);
  t.regex(error('fe80::1%eth0'), /IPv4 or IPv6 address or a CIDR range/);
  t.regex(error('1.2.3.4/8/9'), /CIDR range/);
  t.regex(error(''), /CIDR range/);
});

test('contains and overlaps: nested ranges, addresses, families never mix', (t) => {
  t.true(contains(target('198.51.100.0/24'), target('198.51.100.7')));
  t.true(contains(target('198.51.100.0/24'), target('198.51.100.128/25')));
  t.false(contains(target('198.51.100.128/25'), target('198.51.100.0/24')));
  t.true(overlaps(target('198.51.100.128/25'), target('198.51.100.0/24')));
  t.false(overlaps(target('198.51.100.0/24'), target('198.51.101.0/24')));
  t.true(contains(target('2001:db8::/32'), target('2001:db8:1::5')));
  t.false(contains(target('0.0.0.0/0'), target('::1')));
  t.true(contains(target('192.0.2.1'), target('192.0.2.1')));
});

const mw = (id: string, type: string, config: Record<string, unknown>): StoredObject<MiddlewareData> =>
  ({
    id,
    data: { name: id, type, config },
    etag: '',
    created_at: '',
    updated_at: '',
    file: '',
  }) as unknown as StoredObject<MiddlewareData>;

test('effectiveWithinS: stream → updateIntervalSeconds, live → defaultDecisionSeconds, none/appsec → 0, none known → null', (t) => {
  const bouncer = (options: Record<string, unknown>) => mw('b', 'plugin', { 'crowdsec-bouncer': options });
  t.is(effectiveWithinS([]), null);
  t.is(effectiveWithinS([mw('h', 'headers', { customRequestHeaders: {} })]), null);
  t.is(effectiveWithinS([mw('g', 'plugin', { geoblock: { countries: ['DE'] } })]), null);
  t.is(effectiveWithinS([bouncer({ crowdsecMode: 'stream', updateIntervalSeconds: 15 })]), 15);
  t.is(effectiveWithinS([bouncer({ crowdsecMode: 'stream', updateIntervalSeconds: '20' })]), 20);
  t.is(effectiveWithinS([bouncer({ crowdsecMode: 'live', defaultDecisionSeconds: 30, updateIntervalSeconds: 5 })]), 30);
  t.is(effectiveWithinS([bouncer({ crowdsecLapiKey: 'k' })]), 60, 'the plugin defaults: live, 60 s');
  t.is(effectiveWithinS([bouncer({ crowdsecMode: 'none' })]), 0);
  t.is(effectiveWithinS([bouncer({ crowdsecMode: 'appsec' })]), 0);
  t.is(effectiveWithinS([bouncer({ crowdsecMode: 'stream', enabled: false })]), 0);
  t.is(
    effectiveWithinS([
      bouncer({ crowdsecMode: 'stream', updateIntervalSeconds: 15 }),
      mw('b2', 'plugin', { crowdsec: { crowdsecMode: 'live', defaultDecisionSeconds: 90 } }),
    ]),
    90,
    'the slowest bouncer decides',
  );
  const used = (id: string) => (id === 'b' ? ['/api/resources/app'] : []);
  t.is(
    effectiveWithinS(
      [
        bouncer({ crowdsecMode: 'stream', updateIntervalSeconds: 15 }),
        mw('template', 'plugin', { crowdsec: { crowdsecMode: 'live', defaultDecisionSeconds: 90 } }),
      ],
      used,
    ),
    15,
    'once a bouncer is in use, unused ones (the seeded template) do not count',
  );
});
