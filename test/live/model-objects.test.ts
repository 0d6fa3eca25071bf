/**
 * Which document an instance runs, beyond its routers (API.md §4.19): Traefik lists every configured
 * middleware and service (used or not, measured on 3.7.15), so a document that adds or removes only
 * one of them is told apart by names; and the wording of the findings about an instance.
 */
import test from 'ava';
import { expectDocument, runsDocument } from '../../model/live/compare.ts';
import { instanceFindings, type FindingInput } from '../../model/live/findings.ts';
import type { JsonObject } from '../../model/types.ts';
import { objectsOf, reading, reportedDocument } from './model-readings.ts';

const SERVED = {
  http: {
    routers: { app: { rule: 'Host(`app.test`)', service: 'app-svc', middlewares: ['used'] } },
    services: { 'app-svc': { loadBalancer: { servers: [{ url: 'http://127.0.0.1:1' }] } } },
    middlewares: { used: { compress: {} }, unused: { retry: { attempts: 2 } } },
  },
  tcp: {
    routers: { db: { rule: 'HostSNI(`*`)', service: 'db-svc' } },
    services: { 'db-svc': { loadBalancer: { servers: [{ address: '127.0.0.1:5432' }] } } },
  },
  udp: { services: { dns: { loadBalancer: { servers: [{ address: '127.0.0.1:53' }] } } } },
} as JsonObject;

test('runsDocument compares the names of every middleware and service (and TCP/UDP object) with the document', (t) => {
  const doc = expectDocument(SERVED, 'e', 1);
  const routers = reportedDocument(SERVED);
  const objects = objectsOf(SERVED);
  t.true(runsDocument(reading({ routers, ...objects }), doc));
  // other providers' objects do not count
  const file = { name: 'auth@file', provider: 'file', status: 'enabled' };
  t.true(runsDocument(reading({ routers, ...objects, middlewares: [...objects.middlewares, file] }), doc));
  // a middleware used by no router, absent: Traefik runs an older document (e.g. it refused this one)
  const without = objects.middlewares.filter((m) => m.name !== 'unused@http');
  t.false(runsDocument(reading({ routers, ...objects, middlewares: without }), doc), 'unused middleware absent');
  const extra = { name: 'gone@http', provider: 'http', status: 'enabled' };
  t.false(runsDocument(reading({ routers, ...objects, middlewares: [...objects.middlewares, extra] }), doc), 'extra');
  t.false(runsDocument(reading({ routers, ...objects, services: [] }), doc), 'service absent');
  t.false(runsDocument(reading({ routers, ...objects, tcpRouters: [] }), doc), 'TCP router absent');
  t.false(runsDocument(reading({ routers, ...objects, tcpServices: [] }), doc), 'TCP service absent');
  t.false(runsDocument(reading({ routers, ...objects, udpServices: [extra] }), doc), 'UDP service differs');
  // a service Traefik could not build is still listed (status disabled): the document is run
  const failing = objects.services.map((s) => ({ ...s, status: 'disabled', error: ['a build error'] }));
  t.true(runsDocument(reading({ routers, ...objects, services: failing }), doc));
  // a hand-built document without names compares routers only
  const { objects: _objects, ...routersOnly } = doc;
  t.true(runsDocument(reading({ routers }), routersOnly));
});

function behindFix(version: string | null, setting: string | null | undefined): string {
  const taken = expectDocument(SERVED, '"e1"', 1);
  const latest = expectDocument({ ...SERVED, http: { ...(SERVED.http as JsonObject), x: {} } }, '"e2"', 2);
  const input: FindingInput = {
    reading: reading({ version }),
    document: 'behind',
    latest,
    taken,
    routerOf: new Map([['1-app', 'app@http']]),
    versionKnown: true,
    versionSetting: setting,
  };
  const found = instanceFindings(input).find((f) => f.kind === 'document_behind');
  if (!found) throw new Error('no document_behind');
  return found.fix;
}

test('document_behind fix: names a proxy.traefik_version that differs from the version the instance runs', (t) => {
  const older = behindFix('3.5.3', '3.7.15');
  t.true(older.startsWith('proxy.traefik_version is 3.7.15 but this instance runs 3.5.3: set it to 3.5.3'), older);
  const newer = behindFix('3.7.15', '3.5.3');
  t.true(newer.startsWith('proxy.traefik_version is 3.5.3 but this instance runs 3.7.15'), newer);
  // set and equal ('v' prefix or not): not asked to set it again
  for (const fix of [behindFix('3.7.15', 'v3.7.15'), behindFix(null, '3.7.15')]) {
    t.false(fix.includes('but this instance runs'), fix);
    t.false(fix.includes('set proxy.traefik_version'), fix);
    t.true(fix.includes('proxy.traefik_version is'), fix);
  }
  // unset: set it so the gate drops what this version cannot decode
  for (const setting of [null, undefined, ''])
    t.true(behindFix('3.5.3', setting).includes('set proxy.traefik_version'));
});

test('messages name the instance once: "the Traefik instance `traefik`", never "Traefik traefik"', (t) => {
  const unreachable = { ...reading({}), reachable: false, error: 'connect ECONNREFUSED 127.0.0.1:8080' };
  const disabled = {
    ...reportedDocument(SERVED)[0],
    status: 'disabled',
    error: ['entryPoint "nope" doesn\'t exist'],
    entryPoints: ['nope'],
  };
  const messages = [
    ...instanceFindings({
      reading: unreachable,
      document: 'unknown',
      latest: null,
      taken: null,
      routerOf: new Map(),
      versionKnown: false,
    }),
    ...instanceFindings({
      reading: reading({ routers: [disabled], version: null }),
      document: 'behind',
      latest: expectDocument(SERVED, 'e', 1),
      taken: null,
      routerOf: new Map([['1-app', 'app@http']]),
      versionKnown: false,
    }),
  ].map((f) => f.message);
  t.true(messages.length >= 4, JSON.stringify(messages));
  for (const message of messages) {
    t.false(/Traefik traefik/.test(message), message);
    t.true(message.includes('Traefik instance `traefik`'), message);
  }
});
