/** Template services are offered, not deployed: emitted only once a resource or an emitted service uses them. */
import test from 'ava';
import type { FastifyInstance } from 'fastify';
import { servicesToEmit } from '../../model/generate/services-in-use.ts';
import type { Resource, Service } from '../../model/types.ts';
import { harness, NEXTCLOUD } from '../resources/support.ts';

const service = (
  id: string,
  source: 'manual' | 'template',
  type = 'loadBalancer',
  config: Record<string, unknown> = { servers: [{ url: `http://${id}:80` }] },
): Service => ({ id, name: id, type, protocol: 'http', config, source });
const resource = (id: string, serviceId: string | null, tcpServiceId: string | null = null) =>
  ({
    id,
    service_id: serviceId,
    config: { tcp: { enabled: tcpServiceId !== null, entrypoints: ['tcp'], sni_rule: null, service_id: tcpServiceId } },
  }) as unknown as Resource;
const ids = (list: readonly Service[]) => list.map((s) => s.id).sort();

test('unused template services are left out; manual ones always emitted', (t) => {
  const services = [service('mine', 'manual'), service('example-app', 'template'), service('example-db', 'template')];
  t.deepEqual(ids(servicesToEmit(services, [resource('r1', null)])), ['mine']);
});

test('a template used by a resource (HTTP or TCP service) is emitted', (t) => {
  const services = [
    service('example-app', 'template'),
    service('example-db', 'template'),
    service('unused', 'template'),
  ];
  t.deepEqual(ids(servicesToEmit(services, [resource('r1', 'example-app'), resource('r2', null, 'example-db')])), [
    'example-app',
    'example-db',
  ]);
});

test('templates used by an emitted weighted service are emitted, transitively', (t) => {
  const services = [
    service('split', 'manual', 'weighted', {
      services: [
        { name: 'blue', weight: 1 },
        { name: 'green@docker', weight: 1 },
      ],
    }),
    service('blue', 'template', 'failover', { service: 'blue-main', fallback: 'blue-spare' }),
    service('blue-main', 'template'),
    service('blue-spare', 'template'),
    service('unused', 'template'),
  ];
  t.deepEqual(ids(servicesToEmit(services, [])), ['blue', 'blue-main', 'blue-spare', 'split']);
});

test('without template services the same list comes back (no copy)', (t) => {
  const services = [service('a', 'manual')];
  t.is(servicesToEmit(services, []), services);
});

async function generated(
  app: FastifyInstance,
): Promise<{ http: { services: Record<string, unknown>; middlewares: Record<string, unknown> } }> {
  await app.proxyConfig.regenerate();
  const response = await app.inject({ url: '/api/proxy-config' });
  if (response.statusCode !== 200) throw new Error(`proxy-config answered ${response.statusCode}: ${response.body}`);
  return response.json();
}

test('first start with seeded templates: no example service reaches Traefik until a resource uses one', async (t) => {
  const { app } = await harness(t, { config: { templates: { seed: true } } });
  const seeded = (await app.inject({ url: '/api/services?source=template' })).json() as Array<{ id: string }>;
  t.true(
    seeded.some((s) => s.id === 'example-app'),
    'the templates are offered through the API',
  );
  const before = await generated(app);
  t.false(
    Object.keys(before.http.services).some((id) => id.startsWith('example-')),
    Object.keys(before.http.services).join(', '),
  );
  t.truthy(before.http.middlewares['rate-limit'], 'template middlewares stay emitted');
  const assigned = await app.inject({
    method: 'POST',
    url: `/api/resources/${NEXTCLOUD}/service`,
    payload: { service_id: 'example-app' },
  });
  t.true(assigned.statusCode < 300, assigned.body);
  const after = await generated(app);
  t.truthy(after.http.services['example-app']);
  t.false('example-app-canary' in after.http.services);
});
