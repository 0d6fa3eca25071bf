import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '../core/config/load.ts';
import { tempDir } from './helpers/build.ts';
import { buildApp, call } from './middlewares/support.ts';

type Template = { id: string; name: string };
const templates = async (key: 'middlewares' | 'services'): Promise<Template[]> =>
  (
    parse(await readFile(path.join(PROJECT_ROOT, 'config', 'templates', `${key}.yaml`), 'utf8')) as Record<
      string,
      Template[]
    >
  )[key];

test('every template validates and is seeded once; services are marked source: template', async (t) => {
  const [middlewares, services] = await Promise.all([templates('middlewares'), templates('services')]);
  const app = await buildApp(t, { seed: true });
  const seededMiddlewares = (await call(app, { method: 'GET', url: '/api/middlewares' })).body;
  const seededServices = (await call(app, { method: 'GET', url: '/api/services' })).body;
  // nothing was skipped as invalid: every template became an object
  t.deepEqual(
    seededMiddlewares.map((m: Template) => m.id),
    middlewares.map((m) => m.id).sort(),
  );
  t.deepEqual(
    seededServices.map((s: Template) => s.id),
    services.map((s) => s.id).sort(),
  );
  t.true(seededServices.every((s: { source: string }) => s.source === 'template'));
  t.deepEqual([...app.settings.get().seeded_templates!].sort(), [...middlewares, ...services].map((x) => x.id).sort());
  for (const id of [
    'authelia',
    'authentik',
    'tinyauth',
    'basic-auth',
    'rate-limit',
    'ip-allowlist',
    'headers-standard',
    'redirect-scheme',
    'compress',
    'retry',
    'crowdsec',
    'geoblock',
  ]) {
    t.truthy(
      seededMiddlewares.find((m: Template) => m.id === id),
      id,
    );
  }
  const crowdsec = seededMiddlewares.find((m: Template) => m.id === 'crowdsec');
  t.like(crowdsec, { type: 'plugin' });
  t.truthy(crowdsec.config.crowdsec.crowdsecLapiHost);
  t.deepEqual([...new Set(seededServices.map((s: { type: string }) => s.type))].sort(), [
    'failover',
    'loadBalancer',
    'mirroring',
    'weighted',
  ]);
  t.is(app.store.invalidFiles().length, 0);
});

test('template ids are unique across both files (one seeded_templates list)', async (t) => {
  const ids = [...(await templates('middlewares')), ...(await templates('services'))].map((x) => x.id);
  t.is(new Set(ids).size, ids.length);
});

test('a deleted template is not re-seeded after a restart on the same data dir', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  const first = await buildApp(t, { seed: true, dataDir });
  t.is((await first.inject({ method: 'DELETE', url: '/api/middlewares/retry' })).statusCode, 204);
  t.is((await first.inject({ method: 'DELETE', url: '/api/services/example-postgres-tcp' })).statusCode, 204);
  const edited = (await call(first, { method: 'GET', url: '/api/middlewares/rate-limit' })).body;
  t.is(
    (
      await first.inject({
        method: 'PUT',
        url: '/api/middlewares/rate-limit',
        payload: { name: edited.name, type: 'rateLimit', config: { average: 7 } },
      })
    ).statusCode,
    200,
  );
  await first.close();

  const second = await buildApp(t, { seed: true, dataDir });
  t.is((await call(second, { method: 'GET', url: '/api/middlewares/retry' })).status, 404);
  t.is((await call(second, { method: 'GET', url: '/api/services/example-postgres-tcp' })).status, 404);
  t.deepEqual((await call(second, { method: 'GET', url: '/api/middlewares/rate-limit' })).body.config, { average: 7 });
});

test('a template whose id or name is taken is skipped but recorded', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  await mkdir(path.join(dataDir, 'middlewares'), { recursive: true });
  await writeFile(
    path.join(dataDir, 'middlewares', 'my-sso.yaml'),
    'name: authelia\ntype: forwardAuth\nconfig:\n  address: http://sso:1234\n',
  );
  await writeFile(
    path.join(dataDir, 'middlewares', 'compress.yaml'),
    'name: My compression\ntype: compress\nconfig: {}\n',
  );
  const app = await buildApp(t, { seed: true, dataDir });
  t.is((await call(app, { method: 'GET', url: '/api/middlewares/authelia' })).status, 404);
  t.is((await call(app, { method: 'GET', url: '/api/middlewares/compress' })).body.name, 'My compression');
  t.true(app.settings.get().seeded_templates!.includes('authelia'));
  t.true(app.settings.get().seeded_templates!.includes('compress'));
});

test('templates.seed: false seeds nothing', async (t) => {
  const app = await buildApp(t, { seed: false });
  t.deepEqual((await call(app, { method: 'GET', url: '/api/middlewares' })).body, []);
  t.deepEqual((await call(app, { method: 'GET', url: '/api/services' })).body, []);
  t.is(app.settings.get().seeded_templates, undefined);
});
