/**
 * document_behind's fix names the provider token (API.md §4.19): a Traefik whose
 * providers.http.headers carry a wrong token gets 401 on every poll, runs none of our documents, and
 * the fix only said "check that Traefik polls this server's provider endpoint" (seen in the
 * walkthrough against Traefik 3.7.15, whose log says "received non-ok response code: 401").
 */
import test from 'ava';
import { expectDocument } from '../../model/live/compare.ts';
import { instanceFindings } from '../../model/live/findings.ts';
import type { JsonObject } from '../../model/types.ts';
import { reading } from './model-readings.ts';

const SERVED = {
  http: {
    routers: { app: { entryPoints: ['web'], rule: 'Host(`app.test`)', service: 'app-service' } },
    services: { 'app-service': { loadBalancer: { servers: [{ url: 'http://10.0.0.1:80' }] } } },
  },
} as JsonObject;

test('an instance that never took a document: the fix says to check the provider token and the 401', (t) => {
  const latest = expectDocument(SERVED, '"e1"', 1000);
  for (const versionSetting of [undefined, '3.7.15']) {
    const list = instanceFindings({
      reading: reading({ routers: [] }),
      document: 'behind',
      latest,
      taken: null,
      routerOf: new Map([['app', 'app@http']]),
      versionKnown: true,
      ...(versionSetting ? { versionSetting } : {}),
    });
    const behind = list.find((f) => f.kind === 'document_behind');
    t.truthy(behind, JSON.stringify(list));
    t.regex(behind!.fix, /provider token/);
    t.regex(behind!.fix, /received non-ok response code: 401/);
    t.regex(behind!.fix, /Authorization: Bearer <PROVIDER_TOKEN>/);
  }
});
