/**
 * deploy/cluster/ (README "Running several managers"), checked as far as this machine allows (no
 * images can be pulled): three etcd members in one initial cluster, every manager on all of them
 * with its own node name and data volume, settings the config loader knows, one Traefik per manager.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '../../core/config/load.ts';
import { ENV_MAP } from '../../core/config/schema.ts';
import { REPO } from '../helpers/production-app.ts';

const DIR = path.join(REPO, 'deploy', 'cluster');
// merge keys (`<<: *manager`) resolved as Compose does
const compose = parse(readFileSync(path.join(DIR, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, any>;
};
const services = compose.services;
const names = (prefix: string) => Object.keys(services).filter((n) => n.startsWith(prefix));

test('three etcd members form one initial cluster, each advertising its own URLs', (t) => {
  const members = names('etcd-');
  t.deepEqual(members, ['etcd-1', 'etcd-2', 'etcd-3']);
  for (const name of members) {
    const env = services[name].environment;
    t.is(env.ETCD_NAME, name);
    t.is(env.ETCD_ADVERTISE_CLIENT_URLS, `http://${name}:2379`);
    t.true(env.ETCD_INITIAL_CLUSTER.includes(`${name}=http://${name}:2380`));
  }
});

test('every manager reaches every member, has its own node name and data volume, and only known settings', (t) => {
  const managers = names('manager-');
  t.true(managers.length >= 2);
  const nodeNames = new Set<string>();
  const volumes = new Set<string>();
  for (const name of managers) {
    const env = services[name].environment as Record<string, string>;
    for (const key of Object.keys(env)) t.truthy(ENV_MAP[key as keyof typeof ENV_MAP], `${name}: ${key} is a setting`);
    t.deepEqual(
      env.CLUSTER_ETCD_ENDPOINTS.split(','),
      names('etcd-').map((m) => `http://${m}:2379`),
    );
    nodeNames.add(env.CLUSTER_NODE_NAME);
    volumes.add(services[name].volumes[0].split(':')[0]);
    const config = loadConfig({
      env: {
        CONFIG_FILE: path.join(REPO, 'test', 'helpers', 'empty.yaml'),
        ...env,
        PROVIDER_TOKEN: 'x'.repeat(32),
        PANGOLIN_URL: 'http://pangolin:3001/api/v1',
      },
    });
    t.is(config.cluster.etcd_endpoints.length, 3);
    t.is(config.cluster.node_name, name);
  }
  t.is(nodeNames.size, managers.length);
  t.is(volumes.size, managers.length);
});

test('one Traefik per manager, each polling its own manager with the provider token', (t) => {
  const polled = names('traefik-').map((name) => {
    const command = services[name].command as string[];
    t.true(command.includes('--providers.http.headers.Authorization=Bearer ${PROVIDER_TOKEN}'));
    return command.find((c) => c.startsWith('--providers.http.endpoint='))!.split('=')[1];
  });
  t.deepEqual(
    polled.sort(),
    names('manager-').map((m) => `http://${m}:3456/api/v1/proxy-config`),
  );
});
