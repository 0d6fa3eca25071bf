/**
 * Cost of the version gate (API.md §4.9 G14) per generation, at 1,000 and 10,000 resources:
 * a Pangolin-like document (per resource an HTTP router, its redirect router, a service, and one
 * middleware per 10 resources), gated for Traefik 3.5.3. Rows: nothing gated (the usual case:
 * the document comes back as it is), 10 % of the services with a 3.6 key (copied once, reused by
 * the next generations), the same for a version that decodes everything (the gate walks only
 * the keys that version cannot decode: none of http here) and for 3.0.4 (every path of the table).
 * Run: npx tsx bench/version-gate.ts
 */
import { VersionGate } from '../plugins/proxy-config/version-gate.ts';
import type { JsonObject } from '../model/types.ts';

function documentOf(resources: number, gatedShare: number): JsonObject {
  const routers: JsonObject = {};
  const services: JsonObject = {};
  const middlewares: JsonObject = {};
  for (let i = 0; i < resources; i++) {
    const rule = `Host(\`app${i}.example.com\`)`;
    routers[`${i}-app-router`] = {
      entryPoints: ['websecure'],
      middlewares: ['badger'],
      rule,
      service: `${i}-app-service`,
      tls: { certResolver: 'letsencrypt' },
    };
    routers[`${i}-app-router-redirect`] = {
      entryPoints: ['web'],
      middlewares: ['redirect-to-https'],
      rule,
      service: `${i}-app-service`,
    };
    const loadBalancer: JsonObject = { servers: [{ url: `http://100.89.128.${i % 250}:${20000 + i}` }] };
    if (i < resources * gatedShare) loadBalancer.passiveHealthCheck = { maxFailedAttempts: 3 };
    services[`${i}-app-service`] = { loadBalancer };
    if (i % 10 === 0) middlewares[`mw-${i}`] = { headers: { customRequestHeaders: { 'X-Id': String(i) } } };
  }
  return { http: { routers, services, middlewares }, tcp: { routers: {}, services: {} } };
}

/** A new generation: new top-level objects, the same entry objects (the generator is copy-on-write). */
const nextGeneration = (config: JsonObject): JsonObject => ({
  ...config,
  http: { ...(config.http as JsonObject) },
});

function measure(
  resources: number,
  gatedShare: number,
  version: string,
): { first: number; next: number; dropped: number } {
  const gate = new VersionGate();
  let config = documentOf(resources, gatedShare);
  let start = performance.now();
  const { dropped } = gate.apply(config, version);
  const first = performance.now() - start;
  const runs = 20;
  start = performance.now();
  for (let i = 0; i < runs; i++) {
    config = nextGeneration(config);
    gate.apply(config, version);
  }
  return { first, next: (performance.now() - start) / runs, dropped: dropped.length };
}

for (const resources of [1_000, 10_000]) {
  measure(resources, 0.1, '3.5.3'); // warm-up
  for (const [label, share, version] of [
    ['nothing gated', 0, '3.5.3'],
    ['10% with a 3.6 key', 0.1, '3.5.3'],
    ['10% with a 3.6 key, V 3.7.15', 0.1, '3.7.15'],
    ['10% with a 3.6 key, V 3.0.4', 0.1, '3.0.4'],
  ] as const) {
    const { first, next, dropped } = measure(resources, share, version);
    console.log(
      `${String(resources).padStart(6)} resources, ${label.padEnd(30)} first ${first.toFixed(2)} ms, next generations ${next.toFixed(2)} ms, dropped ${dropped}`,
    );
  }
}
