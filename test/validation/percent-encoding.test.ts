/**
 * Path parameters and query strings with invalid percent-encoding (`%E0%A4%A`, `%ff`) or a NUL
 * (`%00`) on every GET/PUT/PATCH/DELETE route of the OpenAPI document, over a real socket, auth off:
 * 4xx with {id, message}, never 5xx (API.md §2; route-fuzz covers bodies). `%00` is valid encoding
 * and reaches handlers, so it is sent only where no external work can start (route-fuzz's list).
 * A GET reading an upstream this test has none of (Traefik's API, Pangolin) may answer 502
 * upstream_unavailable / 503 not_configured or unhealthy: the environment, not the input (listed in the log).
 */
import test from 'ava';
import { build } from '../helpers/build.ts';
import { listen } from '../helpers/openapi-operations.ts';

const BAD = ['%E0%A4%A', '%ff', '%00', 'a%'];
const EXTERNAL_WORK =
  /^\/api\/(container\/|backup\/restore|static\/apply|history\/\{rev\}\/restore|plugins\/|jobs|datasource\/\{name\}\/test|notifications\/channels\/\{id\}\/test)/;

type Document = { paths: Record<string, Record<string, { parameters?: Array<{ in: string; name: string }> }>> };

test('invalid percent-encoding in path params and queries answers 4xx JSON on every route, never 5xx', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const base = await listen(app);
  const document = (await app.inject({ url: '/api/openapi.json' })).json() as Document;
  const counts = new Map<number, number>();
  let requests = 0;
  const upstream = new Set<string>();
  for (const [template, item] of Object.entries(document.paths))
    for (const [method, operation] of Object.entries(item)) {
      if (!['get', 'put', 'patch', 'delete'].includes(method)) continue;
      const queries = (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
      const urls: string[] = [];
      for (const bad of BAD) {
        if (bad === '%00' && (method !== 'get' || EXTERNAL_WORK.test(template))) continue;
        if (template.includes('{')) urls.push(template.replaceAll(/\{[^}]+\}/g, bad));
        // a query on a route with parameters: the parameters get a plain value
        const plain = template.replaceAll(/\{[^}]+\}/g, 'probe');
        if (method === 'get' && !/\/(stream|events|logs)\b/.test(template))
          urls.push(`${plain}?${[...queries, 'x'].map((name) => `${name}=${bad}`).join('&')}`);
      }
      for (const url of urls) {
        const response = await fetch(base + url, {
          method: method.toUpperCase(),
          ...(method === 'get' || method === 'delete'
            ? {}
            : { headers: { 'content-type': 'application/json' }, body: '{}' }),
          signal: AbortSignal.timeout(30_000),
        });
        requests++;
        counts.set(response.status, (counts.get(response.status) ?? 0) + 1);
        const text = await response.text();
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(text) as Record<string, unknown>;
        } catch {
          // asserted below
        }
        // a GET whose data comes from an upstream this test has none of (Traefik's API, Pangolin)
        const environment =
          method === 'get' && ['upstream_unavailable', 'not_configured', 'unhealthy'].includes(String(body.id));
        if (environment) upstream.add(template);
        t.true(
          response.status < 500 || environment,
          `${method.toUpperCase()} ${url}: ${response.status} ${text.slice(0, 200)}`,
        );
        if (response.status >= 400)
          t.true(typeof body.id === 'string' && typeof body.message === 'string', `${method} ${url}: {id, message}`);
      }
    }
  t.log(
    `${requests} requests: ${[...counts]
      .sort()
      .map(([s, n]) => `${s}×${n}`)
      .join(' ')}`,
  );
  t.log(`5xx from a missing upstream (GET, not the input): ${[...upstream].join(' ') || 'none'}`);
  t.true(requests > 50);
  t.is((await fetch(`${base}/api/health`)).status, 200);
  t.deepEqual(app.store.invalidFiles(), []);
});
