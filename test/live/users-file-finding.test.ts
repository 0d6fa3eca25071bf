/**
 * middleware_error for a basicAuth/digestAuth `usersFile` (model/live/findings.ts): the path is on
 * Traefik's disk, which Stack Manager cannot see, so the fix says to create or correct the file
 * there — not "correct the configuration in Stack Manager" only. Errors as Traefik 3.7.15 reports
 * them (measured: `open <path>: no such file or directory`, `read <path>: is a directory`, `error
 * parsing BasicUser: <line>`); Traefik reads the file only when it builds the middleware.
 */
import test from 'ava';
import { expectDocument } from '../../model/live/compare.ts';
import { instanceFindings } from '../../model/live/findings.ts';
import type { TraefikObject } from '../../model/live/types.ts';
import type { JsonObject } from '../../model/types.ts';
import { reading, reportedDocument } from './model-readings.ts';

const SERVED = {
  http: {
    routers: { app: { entryPoints: ['websecure'], middlewares: ['auth'], rule: 'Host(`app.test`)', service: 'app' } },
  },
} as JsonObject;
const DOC = expectDocument(SERVED, '"e1"', 1000);

/** The one finding for a middleware `auth@http` with `config` and Traefik's `error`. */
function findingFor(config: TraefikObject, error: string) {
  const routers = reportedDocument(SERVED).map((router) => ({ ...router, status: 'disabled', error: [error] }));
  const middleware = { ...config, error: [error], status: 'disabled', usedBy: ['app@http'], name: 'auth@http' };
  const list = instanceFindings({
    reading: reading({ routers, middlewares: [{ provider: 'http', ...middleware }] }),
    document: 'current',
    latest: DOC,
    taken: DOC,
    routerOf: new Map([['1-app-router', 'app@http']]),
    versionKnown: true,
  });
  return list;
}

test('a usersFile Traefik cannot open: the finding names it, Traefik’s text and the resource; the fix is about Traefik’s disk', (t) => {
  for (const [type, error] of [
    ['basicAuth', 'open /etc/traefik/users: no such file or directory'],
    ['digestAuth', 'open /etc/traefik/users: no such file or directory'],
    ['basicAuth', 'read /etc/traefik/users: is a directory'],
  ]) {
    const list = findingFor({ [type]: { usersFile: '/etc/traefik/users' }, type: type.toLowerCase() }, error);
    t.deepEqual(
      list.map((f) => f.kind),
      ['middleware_error'],
    );
    t.like(list[0], {
      id: 'middleware_error:traefik:auth@http',
      resources: ['1-app-router'],
      middlewares: ['auth@http'],
    });
    t.true(list[0].message.includes(error), list[0].message);
    t.regex(list[0].fix, /^\/etc\/traefik\/users is a path on the Traefik instance's disk/);
    t.regex(list[0].fix, /or correct usersFile of middleware auth in Stack Manager/);
    t.regex(list[0].fix, /any change of the dynamic configuration \(or a Traefik restart\) loads it/);
  }
});

test('a line of the usersFile Traefik cannot parse: the fix says to correct the file; an inline user keeps the usual fix', (t) => {
  const fromFile = findingFor(
    { basicAuth: { usersFile: '/etc/traefik/users' }, type: 'basicauth' },
    'error parsing BasicUser: garbage',
  );
  t.regex(fromFile[0].fix, /^A line of \/etc\/traefik\/users .* \(name:hashed-password\): correct it there/);
  const inline = findingFor(
    { basicAuth: { users: ['garbage'], usersFile: '/etc/traefik/users' }, type: 'basicauth' },
    'error parsing BasicUser: garbage',
  );
  t.is(inline[0].fix, "Correct middleware auth's configuration in Stack Manager as Traefik's error says.");
  const other = findingFor({ headers: {}, type: 'headers' }, 'open x: no such file or directory');
  t.is(other[0].fix, "Correct middleware auth's configuration in Stack Manager as Traefik's error says.");
});
