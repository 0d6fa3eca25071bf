/**
 * deploy/compose/, checked as far as this machine allows (no images can be pulled): the YAML
 * parses, the services Stack Manager expects exist under the names it looks for, the Traefik files
 * validate against the Traefik v3 schemas, and the wiring between the services is consistent.
 */
import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { loadConfig } from '../../core/config/load.ts';
import { ENV_MAP } from '../../core/config/schema.ts';
import { SHARED } from '../helpers/shared.ts';
import { REPO } from '../helpers/production-app.ts';

const DIR = path.join(REPO, 'deploy', 'compose');
const composeText = readFileSync(path.join(DIR, 'docker-compose.yml'), 'utf8');
const compose = parse(composeText) as { name: string; services: Record<string, any> };
const services = compose.services;
const traefikStatic = parse(readFileSync(path.join(DIR, 'config', 'traefik', 'traefik_config.yml'), 'utf8'));
const traefikDynamic = parse(readFileSync(path.join(DIR, 'config', 'traefik', 'dynamic_config.yml'), 'utf8'));
const envExample = Object.fromEntries(
  readFileSync(path.join(DIR, '.env.example'), 'utf8')
    .split('\n')
    .filter((l) => /^[A-Z_]+=/.test(l))
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
);
const defaults = loadConfig({ env: { CONFIG_FILE: path.join(REPO, 'test', 'helpers', 'empty.yaml') } });
const schema = (name: string) =>
  new Ajv({ allErrors: true }).compile(JSON.parse(readFileSync(path.join(SHARED, 'schemas', name), 'utf8')));
/** `host:container[:mode]` bind mounts of a service, as [source, target]. */
const mounts = (service: any): Array<[string, string]> =>
  (service.volumes ?? []).map((v: string) => v.split(':').slice(0, 2) as [string, string]);
const environment = (service: any): Record<string, string> => service.environment ?? {};

test('every service of the stack is there, under the container names Stack Manager looks for', (t) => {
  for (const name of ['pangolin', 'gerbil', 'traefik', 'crowdsec', 'newt', 'stack-manager'])
    t.truthy(services[name], name);
  const containerNames = new Set(Object.values(services).map((s) => s.container_name));
  for (const expected of [...defaults.stack.containers, ...Object.values(defaults.logs.services)]) {
    t.true(containerNames.has(expected), `a container named ${expected} (stack.containers / logs.services)`);
  }
  t.is(environment(services['stack-manager']).STACK_PROJECT, compose.name, 'STACK_PROJECT is the compose project name');
  t.deepEqual(services.newt.profiles, ['newt'], 'Newt is optional');
});

test("Traefik runs in Gerbil's network namespace with the static config file of the folder", (t) => {
  const { traefik, gerbil } = services;
  t.is(traefik.network_mode, 'service:gerbil');
  t.is(traefik.ports, undefined, 'ports are published on gerbil');
  t.true(gerbil.ports.includes('443:443') && gerbil.ports.includes('80:80'));
  t.true(traefik.command.includes('--configFile=/etc/traefik/traefik_config.yml'));
  t.true(mounts(traefik).some(([source, target]) => source === './config/traefik' && target === '/etc/traefik'));
  // the Traefik API is reached through gerbil's name: traefik has no network identity of its own
  t.is(environment(services['stack-manager']).TRAEFIK_API_URL, 'http://gerbil:8080');
});

test('the Traefik static file validates against the Traefik v3 schema and polls Stack Manager with the provider token', (t) => {
  const validate = schema('traefik-v3.json');
  t.true(validate(traefikStatic), JSON.stringify(validate.errors));
  t.is(traefikStatic.providers.http.endpoint, 'http://stack-manager:3456/api/v1/proxy-config');
  t.is(
    traefikStatic.providers.http.headers.Authorization,
    `Bearer ${envExample.PROVIDER_TOKEN}`,
    'the same placeholder as .env.example',
  );
  t.truthy(environment(services['stack-manager']).PROVIDER_TOKEN);
  t.is(
    traefikStatic.experimental.plugins.crowdsec.moduleName,
    'github.com/maxlerebourg/crowdsec-bouncer-traefik-plugin',
  );
  t.true(traefikStatic.entryPoints.websecure.http.middlewares.includes('crowdsec@file'));
  t.is(traefikStatic.accessLog.format, 'json');
});

test('the dynamic file validates and defines the bouncer middleware the entry point uses', (t) => {
  const validate = schema('traefik-v3-file-provider.json');
  t.true(validate(traefikDynamic), JSON.stringify(validate.errors));
  t.truthy(traefikDynamic.http.middlewares.crowdsec.plugin.crowdsec);
  t.is(traefikStatic.providers.file.filename, '/etc/traefik/dynamic_config.yml');
});

test('the access log is shared: Traefik writes it, CrowdSec and Stack Manager read it', (t) => {
  const logDir = path.posix.dirname(traefikStatic.accessLog.filePath);
  const sourceOf = (service: any) => mounts(service).find(([, target]) => target === logDir)?.[0];
  const source = sourceOf(services.traefik);
  t.truthy(source);
  t.is(sourceOf(services.crowdsec), source);
  t.is(sourceOf(services['stack-manager']), source);
  t.is(environment(services['stack-manager']).LOGS_PROXY_ACCESS_LOG, traefikStatic.accessLog.filePath);
  const acquis = parse(readFileSync(path.join(DIR, 'config', 'crowdsec', 'acquis.d', 'traefik.yaml'), 'utf8'));
  t.true(acquis.filenames.some((f: string) => f.startsWith(`${logDir}/`)));
});

test('stack-manager: data dirs owned by the image user through an init step, the Docker socket group added, known settings only', (t) => {
  const manager = services['stack-manager'];
  const init = services['stack-manager-init'];
  t.deepEqual(manager.depends_on['stack-manager-init'], { condition: 'service_completed_successfully' });
  const uid = /--uid (\d+)/.exec(readFileSync(path.join(REPO, 'Dockerfile'), 'utf8'))![1];
  t.deepEqual(init.entrypoint, ['chown', '-R', `${uid}:${uid}`, '/data', '/backups', '/plugins-local']);
  t.is(init.user, '0:0');
  const dataMounts = (service: any) =>
    mounts(service).filter(([, target]) => target === '/data' || target === '/backups');
  t.deepEqual(dataMounts(init), dataMounts(manager));
  t.is(dataMounts(manager).length, 2);
  t.regex(manager.group_add[0], /^\$\{DOCKER_GID[:?}]/);
  t.true(
    mounts(manager).some(([source, target]) => source === '/var/run/docker.sock' && target === '/var/run/docker.sock'),
  );
  for (const name of Object.keys(environment(manager))) {
    t.true(name in ENV_MAP || name.replace(/_FILE$/, '') in ENV_MAP, `${name} is a setting Stack Manager reads`);
  }
  t.true(mounts(manager).some(([, target]) => target === path.posix.dirname(environment(manager).PROXY_STATIC_CONFIG)));
});

test('plugins-local: one host dir, read by Traefik at /plugins-local and written by Stack Manager at PROXY_PLUGINS_LOCAL_DIR (owned by the image user)', (t) => {
  const manager = services['stack-manager'];
  const init = services['stack-manager-init'];
  const localDir = environment(manager).PROXY_PLUGINS_LOCAL_DIR;
  t.truthy(localDir, 'PROXY_PLUGINS_LOCAL_DIR is set');
  const sourceOf = (service: any, target: string) => mounts(service).find(([, t2]) => t2 === target)?.[0];
  // Traefik resolves ./plugins-local against its working dir, / in the official image
  const source = sourceOf(services.traefik, '/plugins-local');
  t.truthy(source, 'Traefik mounts /plugins-local');
  t.true(
    services.traefik.volumes.some((v: string) => v.startsWith(`${source}:/plugins-local:ro`)),
    'read-only for Traefik',
  );
  t.is(sourceOf(manager, localDir), source, 'Stack Manager writes the same host dir');
  t.is(sourceOf(init, localDir), source, 'the init step gives it to the image user');
  t.true(init.entrypoint.includes(localDir));
  t.truthy(traefikStatic.experimental.plugins, 'the shipped plugins are remote until vendored');
});

test('every variable the compose file requires is in .env.example', (t) => {
  const used = [...composeText.matchAll(/\$\{([A-Z_]+)/g)].map((m) => m[1]);
  t.true(used.length > 0);
  for (const name of used) t.true(name in envExample, `${name} in .env.example`);
  t.true(existsSync(path.join(DIR, 'config', 'config.yml')), "Pangolin's config.yml");
});
