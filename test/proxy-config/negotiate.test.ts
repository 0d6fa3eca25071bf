import test from 'ava';
import { acceptsGzip } from '../../plugins/proxy-config/negotiate.ts';

test('acceptsGzip: the remembered last value never answers for a different header', (t) => {
  // Traefik's polls repeat one value, which is remembered; any other value is parsed again
  const cases: Array<[string | string[] | undefined, boolean]> = [
    ['gzip', true],
    ['gzip', true],
    ['gzip;q=0', false],
    ['gzip', true],
    ['deflate, br', false],
    ['*', true],
    ['*;q=0', false],
    ['GZIP ; Q=0.5', true],
    [['deflate', 'gzip'], true],
    [['deflate', 'gzip;q=0'], false],
    ['', false],
    [undefined, false],
    ['identity, *;q=0.1', true],
    ['gzip;q=0, *', false],
    ['gzip', true],
  ];
  for (const [header, expected] of cases) t.is(acceptsGzip(header), expected, JSON.stringify(header));
});
