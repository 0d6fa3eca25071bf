/**
 * Server URLs Go's url.Parse refuses (Traefik 3.7.15 disables the service and its routers: `error
 * parsing server URL …`) are refused with 422 at the URL; each case was measured on the binary.
 */
import test from 'ava';
import { goUrlError } from '../../plugins/services/go-url.ts';
import { assertClientError, buildApp, call } from '../middlewares/support.ts';

const REFUSED: Array<[string, string]> = [
  ['127.0.0.1:80', 'first path segment in URL cannot contain colon'],
  ['http://127.0.0.1:abc', 'invalid port ":abc" after host'],
  ['http://a:b:80', 'invalid port ":b:80" after host'],
  ['http://[::1', "missing ']' in host"],
  ['http://[zz]:80', 'invalid host: ParseAddr("zz"): unable to parse IP'],
  ['http://a b', 'invalid character " " in host name'],
  ['http://h^x', 'invalid character "^" in host name'],
  ['http://a/%zz', 'invalid URL escape "%zz"'],
  ['http://h#%zz', 'invalid URL escape "%zz"'],
  ['http://h%41', 'invalid URL escape "%41"'],
  ['http://us er@host', 'net/url: invalid userinfo'],
  ['http://a\tb', 'net/url: invalid control character in URL'],
  [':x', 'missing protocol scheme'],
];
const ACCEPTED = [
  'http://127.0.0.1:9/base',
  'h2c://127.0.0.1:9',
  'http://[::1]:80',
  'http://[fe80::1%25eth0]:80',
  'http://u:p@h',
  'http://h?%zz',
  'http://h:',
  'http://:80',
  'http://127.0.0.1:99999',
  "http://h!$&'()*+,;=x",
  'http://hé',
  'localhost',
  'http:x:y',
  '',
];

test('Go url.Parse errors as Traefik 3.7.15 reports them', (t) => {
  for (const [url, error] of REFUSED) t.is(goUrlError(url), error, url);
  for (const url of ACCEPTED) t.is(goUrlError(url), null, url);
});

test('POST/PUT /api/services refuse a server URL Traefik cannot parse, naming it', async (t) => {
  const app = await buildApp(t);
  const post = (id: string, urls: string[]) =>
    call(app, {
      method: 'POST',
      url: '/api/services',
      payload: { id, name: id, type: 'loadBalancer', config: { servers: urls.map((url) => ({ url })) } },
    });
  const refused = await post('bad', ['http://ok:1', '127.0.0.1:80']);
  assertClientError(t, refused, 422, 'validation_failed');
  t.is(refused.body.details[0].path, '/config/servers/1/url');
  t.regex(refused.body.details[0].message, /first path segment in URL cannot contain colon/);
  t.is((await post('good', ['http://[::1]:80', 'h2c://127.0.0.1:9', 'http://127.0.0.1:9/base'])).status, 201);
  const put = await call(app, {
    method: 'PUT',
    url: '/api/services/good',
    payload: { name: 'good', type: 'loadBalancer', config: { servers: [{ url: 'http://127.0.0.1:abc' }] } },
  });
  assertClientError(t, put, 422, 'validation_failed');
  t.is(put.body.details[0].path, '/config/servers/0/url');
});
