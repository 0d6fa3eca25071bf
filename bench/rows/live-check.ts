/**
 * Row "live check" (issue 26, API.md §4.19): CPU of one check cycle of one Traefik instance, in
 * process, at 1,000 and 10,000 resources. The document is Pangolin-like (per resource an HTTPS
 * router with badger and a redirect router, a service, one headers middleware per 10 resources);
 * the reading is what Traefik 3.7.15 lists after taking it (defaults filled in, names qualified),
 * plus Traefik's own and a few file/docker routers, parsed from JSON like a real read.
 *
 * A cycle after a new generation = expectDocument once + runsDocument + instanceStates +
 * instanceFindings; a cycle when nothing changed = the same without expectDocument (the checker
 * keeps the document's digests; the reading is a fresh parse of identical bytes). The reference,
 * measured in the same run, is JSON.parse of the reading's API bodies: what any checker pays just
 * to read Traefik's lists.
 *
 *   npx tsx bench/rows/live-check.ts [--live-resources 1000,10000]
 * or as a row of `npm run bench` (`--rows live-check`).
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expectDocument, instanceStates, runsDocument, type ExpectedDocument } from '../../model/live/compare.ts';
import { instanceFindings } from '../../model/live/findings.ts';
import type { InstanceReading, TraefikObject } from '../../model/live/types.ts';
import type { JsonObject } from '../../model/types.ts';
import { reading, reported, service } from '../../test/live/model-readings.ts';
import { median } from '../lib/measure.ts';
import type { Row } from './types.ts';

/** The served document for `resources` Pangolin resources. */
export function documentOf(resources: number): JsonObject {
  const routers: JsonObject = {};
  const services: JsonObject = {};
  const middlewares: JsonObject = {
    badger: { plugin: { badger: { apiBaseUrl: 'http://pangolin:3001/api/v1' } } },
    'redirect-to-https': { redirectScheme: { scheme: 'https' } },
  };
  for (let i = 0; i < resources; i++) {
    const rule = `Host(\`app${i}.example.com\`)`;
    const own = i % 10 === 0 ? [`${i}-app-router_headers`] : [];
    routers[`${i}-app-router`] = {
      entryPoints: ['websecure'],
      middlewares: [...own, 'badger'],
      rule,
      service: `${i}-app-service`,
      tls: { certResolver: 'letsencrypt' },
      ...(i % 7 === 0 ? { priority: 100 + i } : {}),
    };
    routers[`${i}-app-router-redirect`] = {
      entryPoints: ['web'],
      middlewares: ['redirect-to-https'],
      rule,
      service: `${i}-app-service`,
    };
    services[`${i}-app-service`] = {
      loadBalancer: { servers: [{ url: `http://100.89.128.${i % 250}:${20000 + i}` }] },
    };
    if (own.length > 0) middlewares[own[0]] = { headers: { customRequestHeaders: { 'X-Id': String(i) } } };
  }
  return { http: { routers, services, middlewares } };
}

/** What Traefik's API lists after taking `config`, as the JSON bodies it sends. */
export function readingBody(config: JsonObject): string {
  const http = config.http as Record<string, Record<string, JsonObject>>;
  const routers: TraefikObject[] = Object.entries(http.routers).map(([key, router]) => reported(key, router));
  for (let i = 0; i < 10; i++) {
    routers.push(reported(`file-${i}`, { rule: `Host(\`file${i}.lan\`)`, service: `file-${i}` }, 'file'));
    routers.push(reported(`docker-${i}`, { rule: `Host(\`docker${i}.lan\`)`, service: `docker-${i}` }, 'docker'));
  }
  routers.push(
    reported(
      'api',
      { rule: 'PathPrefix(`/api`)', service: 'api@internal', priority: 9223372036854775806n },
      'internal',
    ),
  );
  const users = new Map<string, string[]>();
  for (const [key, router] of Object.entries(http.routers)) {
    const list = users.get(String(router.service)) ?? [];
    list.push(`${key}@http`);
    users.set(String(router.service), list);
  }
  const services = Object.entries(http.services).map(([key, value]) => {
    const urls = ((value.loadBalancer as JsonObject).servers as Array<{ url: string }>).map((s) => s.url);
    return service(`${key}@http`, urls, users.get(key) ?? [], Object.fromEntries(urls.map((url) => [url, 'UP'])));
  });
  const middlewares = Object.entries(http.middlewares).map(([key, value]) => ({
    ...value,
    status: 'enabled',
    usedBy: [],
    name: `${key}@http`,
    provider: 'http',
    type: Object.keys(value)[0].toLowerCase(),
  }));
  const base = reading({ routers, services, middlewares, entrypoints: ['traefik', 'web', 'websecure'] });
  return JSON.stringify(base, (_key, value) => (typeof value === 'bigint' ? Number(value) : value));
}

/** User + system CPU ms of `fn`. */
function cpuMs(fn: () => void): number {
  const start = process.cpuUsage();
  fn();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

export interface LiveCheckResult {
  resources: number;
  /** median CPU ms of a cycle after a new generation, of one when nothing changed, of parsing the reading */
  cycle: number;
  unchanged: number;
  parse: number;
  states: number;
  findings: number;
}

export function measureLiveCheck(resources: number, rounds: number): LiveCheckResult {
  const config = documentOf(resources);
  const body = readingBody(config);
  const routerOf = new Map<string, string>();
  for (let i = 0; i < resources; i++) routerOf.set(`r${i}`, `${i}-app-router@http`);
  const cycles: number[] = [];
  const unchanged: number[] = [];
  const parses: number[] = [];
  let states = 0;
  let findings = 0;
  let doc: ExpectedDocument | null = null;
  const check = (instance: InstanceReading, expected: ExpectedDocument) => {
    const running = runsDocument(instance, expected);
    const result = instanceStates(instance, [expected], routerOf);
    const list = instanceFindings({
      reading: instance,
      document: running ? 'current' : 'behind',
      latest: expected,
      taken: running ? expected : null,
      routerOf,
      versionKnown: true,
    });
    states = [...result.values()].filter((s) => s.state === 'live').length;
    findings = list.length;
  };
  for (let round = 0; round < rounds; round++) {
    let instance = JSON.parse(body) as InstanceReading;
    // a new generation: new document objects (a copy), digests computed once
    const served = structuredClone(config);
    cycles.push(
      cpuMs(() => {
        doc = expectDocument(served, `"e${round}"`, round);
        check(instance, doc);
      }),
    );
    instance = JSON.parse(body) as InstanceReading;
    unchanged.push(cpuMs(() => check(instance, doc!)));
    parses.push(cpuMs(() => JSON.parse(body)));
  }
  return { resources, cycle: median(cycles), unchanged: median(unchanged), parse: median(parses), states, findings };
}

export function liveCheckRow(options: { resources?: number[]; rounds?: number } = {}): Row[] {
  const sizes = options.resources ?? [1000, 10000];
  return sizes.map((resources) => {
    const rounds = options.rounds ?? (resources > 5000 ? 7 : 21);
    measureLiveCheck(resources, 2); // warm-up: JIT
    const r = measureLiveCheck(resources, rounds);
    if (r.states !== resources || r.findings !== 0)
      throw new Error(`live check: ${r.states} live, ${r.findings} findings`);
    return {
      measure: `live check of one Traefik instance, ${resources.toLocaleString('en')} resources (${2 * resources + 21} routers): CPU per cycle (median of ${rounds})`,
      ours: `${r.cycle.toFixed(1)} ms after a new generation (digests included), ${r.unchanged.toFixed(1)} ms when nothing changed`,
      reference: `JSON.parse of the reading (${(resources / 1000).toFixed(0)}k): ${r.parse.toFixed(1)} ms (cycle ${(r.cycle / r.parse).toFixed(2)}×, unchanged ${(r.unchanged / r.parse).toFixed(2)}×)`,
      goal: 'unchanged cycle ≤ parsing the reading',
      verdict: r.unchanged <= r.parse ? '✅' : '❌',
    };
  });
}

// alone: npx tsx bench/rows/live-check.ts [--live-resources 1000,10000]
if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const i = process.argv.indexOf('--live-resources');
  const resources = (i > 0 ? process.argv[i + 1] : '1000,10000').split(',').map(Number);
  for (const row of liveCheckRow({ resources }))
    process.stdout.write(`| ${row.measure} | ${row.ours} | ${row.reference} | ${row.goal} | ${row.verdict} |\n`);
}
