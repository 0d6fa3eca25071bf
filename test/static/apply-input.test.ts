/**
 * POST /api/static/apply refusals that need no Docker engine (API.md §4.20, §2.4): bad bodies 422,
 * missing Docker / compose file / static config path 503 `not_configured`, a compose port that
 * cannot be published 409, and the operations class (a token in `auth.mode: ops`). No job starts.
 */
import test, { type ExecutionContext } from 'ava';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { build, tempDir } from '../helpers/build.ts';
import { composeWith, OLD_PORTS, STATIC } from './apply-support.ts';

/** An app whose Docker "is configured" (a host is set; nothing listens there: no call must reach it). */
async function app(
  t: ExecutionContext,
  options: { docker?: boolean; compose?: string | null; staticPath?: boolean; mode?: string } = {},
) {
  const dir = await tempDir(t, 'sm-apply-in-');
  const staticFile = path.join(dir, 'traefik_config.yml');
  const composeFile = path.join(dir, 'docker-compose.yml');
  await writeFile(staticFile, STATIC);
  if (options.compose !== null) await writeFile(composeFile, options.compose ?? composeWith(OLD_PORTS));
  const server = await build(t, {
    config: {
      auth: { mode: options.mode ?? 'off' },
      ...(options.docker === false ? {} : { docker: { host: 'tcp://127.0.0.1:9', socket: '' } }),
      stack: {
        containers: ['traefik', 'gerbil'],
        project: '',
        compose_file: options.compose === null ? '' : composeFile,
      },
      proxy: { static_config_path: options.staticPath === false ? '' : staticFile },
    },
  });
  return { server, composeFile };
}

const apply = (server: Awaited<ReturnType<typeof app>>['server'], payload?: Record<string, unknown>) =>
  payload === undefined
    ? server.inject({ method: 'POST', url: '/api/static/apply' })
    : server.inject({ method: 'POST', url: '/api/static/apply', payload });

const noJobs = async (t: ExecutionContext, server: Awaited<ReturnType<typeof app>>['server']) =>
  t.deepEqual((await server.inject({ url: '/api/jobs' })).json(), [], 'no job was started');

test('unknown service names, an empty or repeated list and a short health timeout answer 422 naming the field', async (t) => {
  const { server } = await app(t);
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ services: ['traefik', 'pangolin'] }, '/services/1'],
    [{ services: [] }, '/services'],
    [{ services: ['gerbil', 'gerbil'] }, '/services'],
    [{ services: 'traefik' }, '/services'],
    [{ health_timeout_s: 5 }, '/health_timeout_s'],
  ];
  for (const [payload, pointer] of cases) {
    const reply = await apply(server, payload);
    t.is(reply.statusCode, 422, `${JSON.stringify(payload)}: ${reply.body}`);
    const body = reply.json() as { id: string; details: Array<{ path: string }> };
    t.is(body.id, 'validation_failed');
    t.true(
      body.details.some((d) => d.path.startsWith(pointer)),
      `${JSON.stringify(payload)} names ${pointer}: ${reply.body}`,
    );
  }
  await noJobs(t, server);
});

test('without a Docker engine: 503 not_configured', async (t) => {
  const { server } = await app(t, { docker: false });
  const reply = await apply(server);
  t.is(reply.statusCode, 503, reply.body);
  t.like(reply.json(), { id: 'not_configured' });
  t.regex((reply.json() as { message: string }).message, /no Docker engine is configured/);
  await noJobs(t, server);
});

test('gerbil without a compose file, traefik without a static config path: 503 not_configured naming the setting', async (t) => {
  const noCompose = (await app(t, { compose: null })).server;
  const gerbil = await apply(noCompose, { services: ['gerbil'] });
  t.is(gerbil.statusCode, 503, gerbil.body);
  t.regex((gerbil.json() as { message: string }).message, /STACK_COMPOSE_FILE/);
  await noJobs(t, noCompose);

  const noStatic = (await app(t, { staticPath: false })).server;
  const traefik = await apply(noStatic, { services: ['traefik'] });
  t.is(traefik.statusCode, 503, traefik.body);
  t.regex((traefik.json() as { message: string }).message, /PROXY_STATIC_CONFIG/);
  await noJobs(t, noStatic);
});

test('a gerbil port the job cannot publish answers 409 naming the item; a compose file without gerbil 409', async (t) => {
  const { server, composeFile } = await app(t, { compose: composeWith(['443:443', '${SSH}:22']) });
  const reply = await apply(server, { services: ['gerbil'] });
  t.is(reply.statusCode, 409, reply.body);
  t.like(reply.json(), { id: 'conflict' });
  t.regex(
    (reply.json() as { message: string }).message,
    /services\.gerbil\.ports\[1\] .* SSH is not set in .*\.env and has no default/,
  );
  // the .env beside the compose file is read as compose reads it: a malformed line is named
  await writeFile(path.join(path.dirname(composeFile), '.env'), 'SSH=2222\nWG="51820\n');
  const badEnv = await apply(server, { services: ['gerbil'] });
  t.is(badEnv.statusCode, 409, badEnv.body);
  t.like(badEnv.json(), { id: 'conflict', details: [{ path: `${path.dirname(composeFile)}/.env:2` }] });
  t.regex((badEnv.json() as { message: string }).message, /the value of WG has no closing "/);

  await writeFile(composeFile, 'services:\n  traefik:\n    image: traefik\n');
  const noGerbil = await apply(server, { services: ['gerbil'] });
  t.is(noGerbil.statusCode, 409, noGerbil.body);
  t.regex((noGerbil.json() as { message: string }).message, /no service gerbil/);
  await noJobs(t, server);
});

test('an operations route: auth.mode ops asks for a token', async (t) => {
  const { server } = await app(t, { mode: 'ops' });
  const reply = await apply(server);
  t.is(reply.statusCode, 401, reply.body);
  t.like(reply.json(), { id: 'auth_failed' });
});
