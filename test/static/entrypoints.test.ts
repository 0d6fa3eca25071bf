import test from 'ava';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { tempDir } from '../helpers/build.ts';
import { harness, call } from '../resources/support.ts';

/** Static config with comments, as operators write it; the fixture stack's routers use tcp-2222, tcp-5432, udp-19132. */
const STATIC = `# Traefik static configuration
entryPoints:
  web:
    address: ":80" # plain HTTP
  websecure:
    address: ":443"
    http3: {}
  # raw TCP for SSH
  tcp-2222:
    address: ":2222"
api:
  insecure: true
`;

const COMPOSE = `# the Pangolin stack
name: pangolin
services:
  gerbil:
    image: fosrl/gerbil:1.0.0 # pinned
    ports:
      - "51820:51820/udp"
      - "443:443"
      - "80:80"
  traefik:
    image: traefik:v3.5
    network_mode: service:gerbil
`;

async function setup(t: ExecutionContext, options: { compose?: boolean; staticPath?: boolean } = {}) {
  const dir = await tempDir(t, 'sm-static-');
  const staticFile = path.join(dir, 'traefik_config.yml');
  const composeFile = path.join(dir, 'docker-compose.yml');
  await writeFile(staticFile, STATIC);
  await writeFile(composeFile, COMPOSE);
  const { app } = await harness(t, {
    config: {
      proxy: { static_config_path: options.staticPath === false ? '' : staticFile },
      stack: { compose_file: options.compose === false ? '' : composeFile },
    },
  });
  const generation = await app.proxyConfig.regenerate();
  if (!generation) throw new Error('no document generated');
  return { app, dir, staticFile, composeFile };
}

const snapshot = async (...files: string[]) => Promise.all(files.map((file) => readFile(file, 'utf8')));

test('GET lists the static entry points, then the missing ones routers use, with Gerbil publication and users', async (t) => {
  const { app } = await setup(t);
  const res = await call(app, { method: 'GET', url: '/api/static/entrypoints' });
  t.is(res.status, 200, res.raw);
  const byName = Object.fromEntries(res.body.map((e: any) => [e.name, e]));
  t.deepEqual(
    res.body.map((e: any) => e.name),
    ['web', 'websecure', 'tcp-2222', 'tcp-5432', 'udp-19132'],
  );
  t.like(byName.web, { address: ':80', protocol: 'tcp', port: 80, in_static_config: true, published_on_gerbil: true });
  t.like(byName['tcp-2222'], {
    address: ':2222',
    port: 2222,
    in_static_config: true,
    published_on_gerbil: false,
    routers: ['4-SSH-router'],
  });
  t.deepEqual(byName['tcp-2222'].published_on_gerbil_warnings, [], 'every ports: item read: nothing to explain');
  t.like(byName['udp-19132'], {
    address: null,
    protocol: 'udp',
    port: 19132,
    in_static_config: false,
    published_on_gerbil: false,
    routers: ['7-Bedrock-router'],
  });
  t.true(byName.websecure.used_by.length > 0, 'HTTP resources use websecure');
});

test('sync adds tcp-5432 and udp-19132 to the static config and publishes their ports on gerbil, keeping comments; dry_run writes nothing', async (t) => {
  const { app, staticFile, composeFile } = await setup(t);
  const dry = await call(app, { method: 'POST', url: '/api/static/entrypoints/sync', payload: { dry_run: true } });
  t.is(dry.status, 200, dry.raw);
  t.deepEqual(dry.body.added, ['tcp-5432', 'udp-19132']);
  t.deepEqual(dry.body.published, ['2222:2222', '5432:5432', '19132:19132/udp']);
  t.deepEqual(dry.body.restart_required, ['traefik', 'gerbil']);
  t.deepEqual(await snapshot(staticFile, composeFile), [STATIC, COMPOSE], 'dry run changes nothing');

  const res = await call(app, { method: 'POST', url: '/api/static/entrypoints/sync', payload: {} });
  t.is(res.status, 200, res.raw);
  t.deepEqual(res.body.added, ['tcp-5432', 'udp-19132']);
  const [newStatic, newCompose] = await snapshot(staticFile, composeFile);
  t.true(
    newStatic.startsWith(`# Traefik static configuration\nentryPoints:\n  web:\n    address: ":80" # plain HTTP\n`),
  );
  t.true(newStatic.includes('  # raw TCP for SSH\n  tcp-2222:\n'));
  t.true(newStatic.includes('  tcp-5432:\n    address: ":5432"\n  udp-19132:\n    address: ":19132/udp"\napi:'));
  t.true(newCompose.includes('    image: fosrl/gerbil:1.0.0 # pinned\n'));
  t.true(
    newCompose.includes(
      '      - "80:80"\n      - "2222:2222"\n      - "5432:5432"\n      - "19132:19132/udp"\n  traefik:',
    ),
    newCompose,
  );
  t.deepEqual(await snapshot(`${staticFile}.bak`, `${composeFile}.bak`), [STATIC, COMPOSE]);

  const again = await call(app, { method: 'POST', url: '/api/static/entrypoints/sync' });
  t.like(again.body, { added: [], published: [], restart_required: [] });
  const listed = await call(app, { method: 'GET', url: '/api/static/entrypoints' });
  t.true(listed.body.every((e: any) => e.in_static_config && e.published_on_gerbil));
});

test('sync without a compose file edits only the static config; without a static config path 503', async (t) => {
  const { app, staticFile } = await setup(t, { compose: false });
  const res = await call(app, { method: 'POST', url: '/api/static/entrypoints/sync' });
  t.is(res.status, 200, res.raw);
  t.like(res.body, {
    added: ['tcp-5432', 'udp-19132'],
    published: [],
    compose_file: null,
    restart_required: ['traefik'],
  });
  t.true((await readFile(staticFile, 'utf8')).includes('udp-19132:'));
  const listed = await call(app, { method: 'GET', url: '/api/static/entrypoints' });
  t.is(listed.body[0].published_on_gerbil, null);

  const unset = await setup(t, { staticPath: false });
  for (const request of [
    { method: 'GET' as const, url: '/api/static/entrypoints' },
    { method: 'POST' as const, url: '/api/static/entrypoints/sync' },
    { method: 'PUT' as const, url: '/api/static/entrypoints/x', payload: { address: ':9000' } },
  ]) {
    const answer = await call(unset.app, request);
    t.is(answer.status, 503, answer.raw);
    t.is(answer.body.id, 'not_configured');
  }
});

test('PUT adds or re-addresses an entry point; bad names, addresses and taken ports are refused with the file unchanged', async (t) => {
  const { app, staticFile } = await setup(t);
  const put = (name: string, address: unknown) =>
    call(app, { method: 'PUT', url: `/api/static/entrypoints/${name}`, payload: { address } });
  const created = await put('tcp-8443', ':8443');
  t.is(created.status, 200, created.raw);
  t.like(created.body, {
    name: 'tcp-8443',
    address: ':8443',
    port: 8443,
    in_static_config: true,
    restart_required: ['traefik'],
  });
  const moved = await put('websecure', ':8444');
  t.is(moved.status, 200, moved.raw);
  const text = await readFile(staticFile, 'utf8');
  t.true(text.includes('  websecure:\n    address: ":8444"\n    http3: {}\n'), 'other settings stay');
  t.true(text.includes('tcp-8443:\n    address: ":8443"'));

  for (const [name, address, status, id] of [
    ['tcp-1', ':0', 422, 'validation_failed'],
    ['tcp-1', ':65536', 422, 'validation_failed'],
    ['tcp-1', '0.0.0.0:80', 422, 'validation_failed'],
    ['tcp-1', ':80/sctp', 422, 'validation_failed'],
    ['tcp-1', 80, 422, 'validation_failed'],
    ['bad.name', ':9001', 422, 'validation_failed'],
    ['b%20ad', ':9001', 422, 'validation_failed'],
    ['tcp-80', ':80', 409, 'conflict'],
    ['other', ':2222', 409, 'conflict'],
  ] as const) {
    const res = await put(name, address);
    t.is(res.status, status, `${name} ${address}: ${res.raw}`);
    t.is(res.body.id, id);
  }
  t.is(await readFile(staticFile, 'utf8'), text, 'refused requests leave the file as it was');
  // UDP on a TCP entry point's port is another socket: allowed
  t.is((await put('udp-80', ':80/udp')).status, 200);
});

test('DELETE removes an unused entry point (204), 409 in_use when routers use it, 404 when absent', async (t) => {
  const { app, staticFile } = await setup(t);
  const del = (name: string) => call(app, { method: 'DELETE', url: `/api/static/entrypoints/${name}` });
  const used = await del('tcp-2222');
  t.is(used.status, 409, used.raw);
  t.is(used.body.id, 'in_use');
  t.deepEqual(
    used.body.details.map((d: any) => d.path),
    ['4-SSH-router'],
  );
  t.is((await del('nope')).status, 404);
  await call(app, { method: 'PUT', url: '/api/static/entrypoints/spare', payload: { address: ':9999' } });
  t.is((await del('spare')).status, 204);
  t.false((await readFile(staticFile, 'utf8')).includes('spare'));
});

test('unusable files answer 409 and nothing is half-written: invalid YAML, no gerbil service, a failed compose write rolls back the static config', async (t) => {
  const { app, staticFile, composeFile } = await setup(t);
  const sync = () => call(app, { method: 'POST', url: '/api/static/entrypoints/sync' });

  await writeFile(composeFile, 'services:\n  traefik:\n    image: traefik\n');
  let res = await sync();
  t.is(res.status, 409, res.raw);
  t.regex(res.body.message, /no service gerbil/);
  t.is(await readFile(staticFile, 'utf8'), STATIC);

  await writeFile(composeFile, 'services: [\n');
  res = await sync();
  t.is(res.status, 409, res.raw);
  t.is(res.body.id, 'conflict');
  t.is(await readFile(staticFile, 'utf8'), STATIC);

  // the compose file's .bak cannot be written (a non-empty directory there): the static config gets its bytes back
  await writeFile(composeFile, COMPOSE);
  await mkdir(path.join(`${composeFile}.bak`, 'x'), { recursive: true });
  res = await sync();
  t.is(res.status, 409, res.raw);
  t.regex(res.body.message, /compose file/);
  t.deepEqual(await snapshot(staticFile, composeFile), [STATIC, COMPOSE]);

  // a static config that is a list, and one that is not readable (a directory)
  await writeFile(staticFile, '- a\n- b\n');
  res = await call(app, { method: 'PUT', url: '/api/static/entrypoints/x', payload: { address: ':9000' } });
  t.is(res.status, 409, res.raw);
  t.is(await readFile(staticFile, 'utf8'), '- a\n- b\n');

  if (process.getuid?.() !== 0) {
    await writeFile(staticFile, STATIC);
    await chmod(staticFile, 0o444);
    res = await call(app, { method: 'PUT', url: '/api/static/entrypoints/x', payload: { address: ':9000' } });
    t.is(res.status, 409, res.raw);
    t.is((await stat(staticFile)).mode & 0o777, 0o444);
    t.is(await readFile(staticFile, 'utf8'), STATIC);
  }
});

test('ports written with ${VAR} count as published by the values of the .env beside the compose file', async (t) => {
  const { app, composeFile } = await setup(t);
  await writeFile(
    composeFile,
    COMPOSE.replace('- "443:443"', '- "${HTTPS_PORT:-443}:${HTTPS_PORT:-443}"').replace(
      '- "80:80"',
      '- "80:80"\n      - "${SSH_PORT}:${SSH_PORT}"\n      - target: ${PG_PORT}\n        published: ${PG_PORT}\n        protocol: ${PG_PROTO:-tcp}',
    ),
  );
  const published = async () =>
    Object.fromEntries(
      (await call(app, { method: 'GET', url: '/api/static/entrypoints' })).body.map((e: any) => [
        e.name,
        e.published_on_gerbil,
      ]),
    );
  // no .env: SSH_PORT and PG_PORT have no value, the default gives 443
  t.like(await published(), { websecure: true, 'tcp-2222': false, 'tcp-5432': false });
  const dry = await call(app, { method: 'POST', url: '/api/static/entrypoints/sync', payload: { dry_run: true } });
  // the items with unset variables could publish any TCP port (and the long one, whose protocol is a variable, any
  // UDP port): a "2222:2222" beside them would clash once .env sets them
  t.deepEqual(dry.body.published, []);
  t.deepEqual(
    dry.body.skipped.map((s: any) => s.name),
    ['tcp-2222', 'tcp-5432', 'udp-19132'],
  );
  t.regex(
    dry.body.skipped[0].reason,
    /^port 2222\/tcp not published on gerbil: services\.gerbil\.ports\[3\] "\$\{SSH_PORT\}:\$\{SSH_PORT\}" cannot be read: SSH_PORT is not set .* — fix it, then sync again$/,
  );
  t.deepEqual(
    dry.body.added,
    ['tcp-5432', 'udp-19132'],
    'the static config entries are still added (tcp-2222 is there)',
  );

  await writeFile(path.join(path.dirname(composeFile), '.env'), 'SSH_PORT=2222\nPG_PORT=5432\n');
  t.like(await published(), { websecure: true, 'tcp-2222': true, 'tcp-5432': true, 'udp-19132': false });
  const sync = await call(app, { method: 'POST', url: '/api/static/entrypoints/sync', payload: { dry_run: true } });
  t.deepEqual(sync.body.published, ['19132:19132/udp'], 'no second mapping of a port a variable publishes');
});

test('a .env that cannot be used: entry points whose port an item with a variable could publish say so, naming the file and line', async (t) => {
  const { app, composeFile } = await setup(t);
  const envFile = path.join(path.dirname(composeFile), '.env');
  await writeFile(
    composeFile,
    COMPOSE.replace(
      '- "80:80"',
      '- "80:80"\n      - "${SSH_PORT}:2222"\n      - "${BEDROCK_PORT}:${BEDROCK_PORT}/udp"',
    ),
  );
  await writeFile(envFile, '# ports\nSSH_PORT=2222\nBEDROCK_PORT="19132\n');
  const list = async () =>
    Object.fromEntries(
      (await call(app, { method: 'GET', url: '/api/static/entrypoints' })).body.map((e: any) => [e.name, e]),
    );
  const broken = await list();
  t.like(broken['tcp-2222'], { published_on_gerbil: false });
  t.deepEqual(broken['tcp-2222'].published_on_gerbil_warnings, [
    `services.gerbil.ports[3] "\${SSH_PORT}:2222" uses variables, and the .env file ${envFile}:3 cannot be used: the value of BEDROCK_PORT has no closing "`,
  ]);
  // the container port of ports[4] is a variable: it could be any UDP port, not a TCP one
  t.deepEqual(
    broken['udp-19132'].published_on_gerbil_warnings.map((w: string) => w.split(' uses variables')[0]),
    ['services.gerbil.ports[4] "${BEDROCK_PORT}:${BEDROCK_PORT}/udp"'],
  );
  t.deepEqual(broken['tcp-5432'].published_on_gerbil_warnings, [], 'no item could publish 5432/tcp');
  t.like(broken.web, { published_on_gerbil: true, published_on_gerbil_warnings: [] });
  // (the apply job refuses with the same file and line: test/static/apply-input.test.ts)
  // sync publishes no second mapping beside an item it cannot read, and says why; a port no such item concerns is published
  const composeBefore = await readFile(composeFile, 'utf8');
  const sync = await call(app, { method: 'POST', url: '/api/static/entrypoints/sync', payload: {} });
  t.is(sync.status, 200, JSON.stringify(sync.body));
  t.deepEqual(sync.body.published, ['5432:5432']);
  t.deepEqual(
    sync.body.skipped.map((s: any) => [s.name, s.reason.includes(`${envFile}:3 cannot be used`)]),
    [
      ['tcp-2222', true],
      ['udp-19132', true],
    ],
  );
  const composeAfter = await readFile(composeFile, 'utf8');
  t.false(composeAfter.includes('"2222:2222"'), 'no clashing 2222 mapping written');
  t.true(composeAfter.includes('"5432:5432"') && !composeBefore.includes('"5432:5432"'));

  // a variable .env does not set: the item's own reason
  await writeFile(envFile, 'BEDROCK_PORT=19132\n');
  const unset = await list();
  t.like(unset['udp-19132'], { published_on_gerbil: true, published_on_gerbil_warnings: [] });
  t.is(unset['tcp-2222'].published_on_gerbil_warnings.length, 1);
  t.regex(
    unset['tcp-2222'].published_on_gerbil_warnings[0],
    /ports\[3\] "\$\{SSH_PORT\}:2222" cannot be read: SSH_PORT is not set in .*\.env and has no default/,
  );

  await writeFile(envFile, 'SSH_PORT=2222\nBEDROCK_PORT=19132\n');
  const fixed = await list();
  t.like(fixed['tcp-2222'], { published_on_gerbil: true, published_on_gerbil_warnings: [] });
});
