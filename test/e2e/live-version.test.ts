/**
 * `version_unknown` (API.md §4.19) against the real Traefik: an operator who exposes api@internal
 * through a router of their own whose rule lets through only the lists (the entry points and the
 * http/tcp/udp routers, services, middlewares, the overview) but not `/api/version` — Traefik
 * answers 404 there. Stack Manager still reads the instance (reachable, the resource `live`) and
 * warns that it does not know the version; `proxy.traefik_version` set → no warning; a Traefik
 * whose `/api/version` reads → no warning and the version named.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { stringify } from 'yaml';
import { tempDir } from '../helpers/build.ts';
import { traefikTest, TRAEFIK_VERSION } from '../helpers/traefik.ts';
import {
  data,
  diagnosis,
  findingId,
  startLiveStack,
  waitForFinding,
  waitForLive,
  type LiveStack,
} from './live-support.ts';

const RESOURCES = [{ id: 1, name: 'app', host: 'app.test', backends: ['a'] }];
const ROUTER = '1-app-router';

/** The paths the operator's router lets through to api@internal: every list, not /api/version. */
const LISTS_ONLY = ['/api/entrypoints', '/api/overview', '/api/http', '/api/tcp', '/api/udp', '/api/rawdata']
  .map((prefix) => `PathPrefix(\`${prefix}\`)`)
  .join(' || ');

/**
 * A live stack whose Traefik serves its API only through a file-provider router `traefik-api` on
 * the `traefik` entry point (api.insecure off), with the rule `rule`.
 */
async function restrictedStack(t: ExecutionContext, config?: Record<string, unknown>): Promise<LiveStack> {
  const dynamicFile = path.join(await tempDir(t, 'sm-traefik-api-'), 'api-router.yml');
  await writeFile(
    dynamicFile,
    stringify({
      http: { routers: { 'traefik-api': { entryPoints: ['traefik'], rule: LISTS_ONLY, service: 'api@internal' } } },
    }),
  );
  return startLiveStack(t, {
    backends: ['a'],
    resources: RESOURCES,
    config,
    traefik: {
      editStatic: (staticConfig) => {
        staticConfig.api = { dashboard: false };
        staticConfig.providers.file = { filename: dynamicFile };
      },
    },
  });
}

traefikTest(test)(
  '/api/version not routed (404): the instance is read, the resource live, version_unknown warns',
  async (t) => {
    const started = Date.now();
    const stack = await restrictedStack(t);
    // the set-up does what it says: Traefik itself answers 404 on /api/version and serves the lists
    const version = await fetch(`${stack.traefik.apiBase}/api/version`);
    t.is(version.status, 404);
    t.is((await fetch(`${stack.traefik.apiBase}/api/http/routers`)).status, 200);

    // the data source test reads the routers too, and names no version
    const probe = await stack.sm.call('POST', '/api/datasource/traefik/test');
    t.like(probe.json, { ok: true, version: null, error: null });
    t.true(probe.json.routers >= 2, probe.text);

    const { live } = await waitForLive(stack, ROUTER, 'live', started);
    t.deepEqual(live.instances, [{ source: 'traefik', state: 'live', errors: [], traefik_version: null }]);
    const { finding, seconds } = await waitForFinding(stack, (f) => f.kind === 'version_unknown', started);
    t.log(`${finding.id} ${seconds.toFixed(1)} s after start: ${finding.message} | fix: ${finding.fix}`);
    t.like(finding, { id: 'version_unknown:traefik:instance', severity: 'warning', resources: [] });
    t.regex(finding.message, /HTTP 404/);
    t.regex(finding.fix, /proxy\.traefik_version/);
    const current = await diagnosis(stack);
    t.like(current.instances, [{ source: 'traefik', reachable: true, version: null, document: 'current' }]);
    t.deepEqual(
      current.findings.map((f: { kind: string }) => f.kind),
      ['version_unknown'],
      JSON.stringify(current.findings),
    );
    const raised = await stack.events.next((e) => e.event === 'diagnosis' && findingId(e) === finding.id);
    t.is(data(raised).action, 'raised');
  },
);

traefikTest(test)('/api/version not routed, proxy.traefik_version set: no version_unknown', async (t) => {
  const started = Date.now();
  const stack = await restrictedStack(t, { proxy: { traefik_version: TRAEFIK_VERSION } });
  await waitForLive(stack, ROUTER, 'live', started);
  const current = await diagnosis(stack);
  t.like(current.instances, [{ source: 'traefik', reachable: true, version: null, document: 'current' }]);
  t.deepEqual(current.findings, []);
});

traefikTest(test)('/api/version readable: no version_unknown, the version named', async (t) => {
  const started = Date.now();
  const stack = await startLiveStack(t, { backends: ['a'], resources: RESOURCES });
  const { live } = await waitForLive(stack, ROUTER, 'live', started);
  t.is(live.instances[0].traefik_version, TRAEFIK_VERSION);
  const current = await diagnosis(stack);
  t.like(current.instances, [{ source: 'traefik', reachable: true, version: TRAEFIK_VERSION }]);
  t.deepEqual(current.findings, []);
});
