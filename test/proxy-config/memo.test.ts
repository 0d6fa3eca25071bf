/**
 * The generator's per-resource memo (generate-memo.ts): across a scripted series of input changes,
 * generating with the memo gives the same bytes, conflicts, dangling references and outcomes as
 * generating from scratch, and unchanged resources reuse their router objects.
 */
import test from 'ava';
import { generateConfig, type GenerationInput, type GenerationResult } from '../../model/generate/generate.ts';
import { PatchMemo } from '../../model/generate/generate-memo.ts';
import type { Resource } from '../../model/types.ts';
import { FragmentCache, serializeJson } from '../../plugins/proxy-config/serialize.ts';
import {
  appV2,
  authelia,
  fixtureResource,
  loadFixture,
  mtlsState,
  pangolinInput,
  rateLimit,
  resource,
  router,
} from './inputs.ts';

type Config = Record<string, any>;

const NEXTCLOUD = {
  id: '1-nextcloud-router',
  name: '1-Nextcloud-router',
  host: 'cloud.example.com',
  service: '1-Nextcloud-service',
};
const GRAFANA = {
  id: '2-grafana-router',
  name: '2-Grafana-router',
  host: 'grafana.example.com',
  service: '2-Grafana-service',
};
const JELLYFIN = {
  id: '6-jellyfin-media-router',
  name: '6-Jellyfin-Media-router',
  host: 'media.example.com',
  service: '6-Jellyfin-Media-service',
};

function baseResources(): Resource[] {
  return [
    fixtureResource(
      NEXTCLOUD,
      { middlewares: [{ id: 'authelia', priority: 200 }], service_id: 'app-v2' },
      { headers: { request: { 'X-A': '1' }, response: {} } },
    ),
    fixtureResource(GRAFANA, {
      middlewares: [{ id: 'ghost', priority: 100 }],
      external_middlewares: [{ name: 'crowdsec', priority: 150, provider: 'file' }],
    }),
    fixtureResource(JELLYFIN, {}, { tcp: { enabled: true }, priority: { priority: 900 } }),
    // a second resource claiming Nextcloud's router: patches the first one's copy
    fixtureResource({ ...NEXTCLOUD, id: '9-nextcloud-again' }, { middlewares: [{ id: 'rate-limit', priority: 100 }] }),
    fixtureResource(
      { ...GRAFANA, id: '0-disabled' },
      { status: 'disabled', middlewares: [{ id: 'authelia', priority: 100 }] },
    ),
  ];
}

function baseInput(): GenerationInput {
  return pangolinInput(loadFixture('pangolin', 'traefik-config.json'), {
    middlewares: [authelia, rateLimit],
    services: [appV2],
    resources: baseResources(),
  });
}

const fragments = new WeakMap<PatchMemo, FragmentCache>();
const memoWithCache = (): PatchMemo => {
  const memo = new PatchMemo();
  fragments.set(memo, new FragmentCache());
  return memo;
};

/** What must not differ between memo and scratch generation. */
function observable(result: GenerationResult): string {
  return JSON.stringify({
    bytes: serializeJson(result.config).toString('utf8'),
    conflicts: result.conflicts,
    dangling: result.dangling_references,
    resources: result.resources,
    counts: result.counts,
  });
}

/** Generates with the memo and from scratch; asserts both agree and returns the memo's result. */
function both(
  t: import('ava').ExecutionContext,
  memo: PatchMemo,
  input: GenerationInput,
  step: string,
): GenerationResult {
  const memoised = generateConfig(input, memo);
  const scratch = generateConfig(input);
  t.is(observable(memoised), observable(scratch), step);
  // and the provider's JSON path: the map cache carried from step to step writes the same bytes
  t.true(
    serializeJson(memoised.config, fragments.get(memo)).equals(serializeJson(scratch.config)),
    `${step}: bytes through the fragment cache`,
  );
  return memoised;
}

const replaceResource = (input: GenerationInput, id: string, change: (r: Resource) => Resource): GenerationInput => ({
  ...input,
  resources: input.resources.map((r) => (r.id === id ? change(r) : r)),
});

test('memo: every change in a series gives the same bytes, conflicts and outcomes as a scratch generation', (t) => {
  const memo = memoWithCache();
  let input = baseInput();
  const first = both(t, memo, input, 'initial');
  t.is(memo.stats.patched, 5);

  // nothing changed: every cacheable resource is replayed (the TCP one is always patched)
  const again = both(t, memo, input, 'unchanged');
  t.deepEqual(memo.stats, { replayed: 4, patched: 1 });
  t.is(
    router(again.config, '2-Grafana-router'),
    router(first.config, '2-Grafana-router'),
    'the same router object is reused',
  );

  // a middleware body changes (same id): routers are replayed, the body is new
  input = {
    ...input,
    middlewares: [{ ...authelia, config: { ...authelia.config, address: 'http://authelia:9999/' } }, rateLimit],
  };
  const edited = both(t, memo, input, 'middleware body edited');
  t.deepEqual(memo.stats, { replayed: 4, patched: 1 });
  t.is((edited.config as Config).http.middlewares.authelia.forwardAuth.address, 'http://authelia:9999/');

  // one resource changes: only it (and the always-patched TCP one) is patched again
  input = replaceResource(input, GRAFANA.id, (r) => ({ ...r, middlewares: [{ id: 'authelia', priority: 100 }] }));
  both(t, memo, input, 'one resource edited');
  t.deepEqual(memo.stats, { replayed: 3, patched: 2 });

  // the first claimant of a shared router changes: the second one's base changed too
  input = replaceResource(input, NEXTCLOUD.id, (r) => ({ ...r, config: { ...r.config, priority: { priority: 42 } } }));
  both(t, memo, input, 'first claimant edited');
  t.deepEqual(memo.stats, { replayed: 2, patched: 3 });

  // a middleware nobody references appears: nothing to patch again
  input = {
    ...input,
    middlewares: [...input.middlewares, { id: 'ghost', name: 'Ghost', type: 'headers', config: {} }],
  };
  both(t, memo, input, 'unreferenced middleware added');
  t.deepEqual(memo.stats, { replayed: 4, patched: 1 });

  // a referenced middleware goes: the resource that assigns it is patched again (now dangling)
  input = { ...input, middlewares: input.middlewares.filter((m) => m.id !== 'rate-limit') };
  const dropped = both(t, memo, input, 'referenced middleware deleted');
  t.deepEqual(memo.stats, { replayed: 3, patched: 2 });
  t.true(dropped.dangling_references.some((d) => d.ref === '/api/middlewares/rate-limit'));

  // the service a resource uses goes: it is patched again, and so is the second claimant of its router
  input = { ...input, services: [] };
  both(t, memo, input, 'referenced service deleted');
  t.deepEqual(memo.stats, { replayed: 2, patched: 3 });

  // the mode's environment (mTLS state) changes: every resource is patched again
  input = { ...input, mtls: mtlsState({ verify_url: 'http://elsewhere:3000/api/mtls/verify' }) };
  both(t, memo, input, 'mTLS settings changed');
  t.deepEqual(memo.stats, { replayed: 0, patched: 5 });

  // the upstream now defines a key one of our replayed patches puts: replay falls back, conflict reported
  const upstream = input.upstream as Config;
  input = {
    ...input,
    upstream: {
      ...upstream,
      http: {
        ...upstream.http,
        middlewares: { ...upstream.http.middlewares, '1-nextcloud-router_headers': { headers: {} } },
      },
    },
  };
  const clash = both(t, memo, input, 'upstream takes a key of ours');
  t.true(clash.conflicts.some((c) => c.key === '1-nextcloud-router_headers'));

  // and the same again: a resource that met a conflict is not memoised
  both(t, memo, input, 'conflict again');
  t.is(memo.stats.replayed, 2);

  // mTLS state change: the environment changed
  input = {
    ...input,
    mtls: mtlsState({
      enabled: true,
      ca_pem: '-----BEGIN CERTIFICATE-----',
      plugin: { installed: true, key: 'mtlswhitelist' },
    }),
  };
  input = replaceResource(input, GRAFANA.id, (r) => ({ ...r, config: { ...r.config, mtls: { enabled: true } } }));
  both(t, memo, input, 'mTLS on');
  both(t, memo, input, 'mTLS on, unchanged');
  t.true(memo.stats.replayed > 0);

  // a resource goes away: its objects go with it
  input = { ...input, resources: input.resources.filter((r) => r.id !== GRAFANA.id) };
  const removed = both(t, memo, input, 'resource removed');
  t.is((removed.config as Config).http.middlewares['2-grafana-router_mtls'], undefined);
});

test('memo: Traefik mode replays routers of unchanged resources and follows a changed runtime router', (t) => {
  const routers = loadFixture('traefik-api', 'http-routers.json') as Config[];
  const make = (upstream: unknown, resources: Resource[]): GenerationInput => ({
    mode: 'traefik',
    upstream,
    middlewares: [authelia],
    services: [],
    discoveredServices: [],
    resources,
    mtls: mtlsState(),
  });
  const named = routers.filter((r) => typeof r.name === 'string' && !r.name.includes('@internal')).slice(0, 3);
  const resources = named.map((r, i) =>
    resource(`r${i}`, { router: r.name, source: 'traefik', middlewares: [{ id: 'authelia', priority: 100 }] }),
  );
  const memo = memoWithCache();
  both(t, memo, make(routers, resources), 'initial');
  both(t, memo, make(routers, resources), 'unchanged');
  t.deepEqual(memo.stats, { replayed: resources.length, patched: 0 });

  // Traefik reports a new priority for one router (a new object from the next poll)
  const changed = routers.map((r) => (r === named[0] ? { ...r, priority: 7, priorityStr: '7' } : r));
  const result = both(t, memo, make(changed, resources), 'runtime router changed');
  t.deepEqual(memo.stats, { replayed: resources.length - 1, patched: 1 });
  t.is(router(result.config, 'r0').priority, 8);
});
