/** Unit tests of allow-list matching and Go durations used by the IP group. */
import test from 'ava';
import type { StoredObject } from '../../core/store/types.ts';
import type { MiddlewareData } from '../../plugins/middlewares/schemas.ts';
import { allowlistedBy } from '../../plugins/ip/allowlist.ts';
import { goDurationMs } from '../../plugins/ip/go-duration.ts';

const mw = (id: string, type: string, sourceRange: unknown): StoredObject<MiddlewareData> =>
  ({
    id,
    data: { name: id, type, config: { sourceRange } },
    etag: '',
    created_at: '',
    updated_at: '',
    file: '',
  }) as unknown as StoredObject<MiddlewareData>;

const all = [
  mw('lan', 'ipAllowList', ['10.0.0.0/8', '192.168.1.10']),
  mw('old', 'ipWhiteList', ['10.1.0.0/16']),
  mw('v6', 'ipAllowList', ['2001:db8:1::/48', '::1']),
  mw('broken', 'ipAllowList', ['not-an-ip', '10.0.0.0/99', 42, '1.2.3.4/8/9']),
  mw('headers', 'headers', ['10.0.0.0/8']),
  mw('no-range', 'ipAllowList', undefined),
];

test('allowlistedBy matches CIDRs and single addresses of ipAllowList and ipWhiteList, sorted', (t) => {
  t.deepEqual(allowlistedBy('10.1.2.3', all), ['lan', 'old']);
  t.deepEqual(allowlistedBy('192.168.1.10', all), ['lan']);
  t.deepEqual(allowlistedBy('192.168.1.11', all), []);
  t.deepEqual(allowlistedBy('2001:db8:1:ffff::5', all), ['v6']);
  t.deepEqual(allowlistedBy('::1', all), ['v6']);
  t.deepEqual(allowlistedBy('2001:db8:2::1', all), []);
});

test('goDurationMs reads the durations LAPI sends', (t) => {
  t.is(goDurationMs('1h0m0s'), 3_600_000);
  t.is(goDurationMs('59m59.5s'), 3_599_500);
  t.is(goDurationMs('-3s'), -3000);
  t.is(goDurationMs('250ms'), 250);
  t.is(goDurationMs('0'), 0);
  t.is(goDurationMs('soon'), null);
});
