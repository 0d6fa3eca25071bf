/** The create request of a replacement container: the old settings, minus what came from the old image. */
import test from 'ava';
import type Docker from 'dockerode';
import { hasHealthcheck, networkTargetOf, recreateRequest } from '../../plugins/container/update/create-options.ts';
import { registryOf } from '../../plugins/container/update/docker-ops.ts';

const ID = 'a1b2c3d4e5f6' + '0'.repeat(52);

function inspect(
  config: Record<string, unknown>,
  hostConfig: Record<string, unknown>,
  networks: Record<string, unknown> = {},
): Docker.ContainerInspectInfo {
  return {
    Id: ID,
    Config: { Image: 'reg.example:5000/stack/proxy:3', Hostname: ID.slice(0, 12), ...config },
    HostConfig: hostConfig,
    NetworkSettings: { Networks: networks },
  } as unknown as Docker.ContainerInspectInfo;
}

const oldImage = {
  Env: ['PATH=/bin', 'VERSION=1'],
  Labels: { 'org.opencontainers.image.version': '1', shared: 'image' },
  Cmd: ['serve'],
  Entrypoint: ['/entry'],
  WorkingDir: '/app',
  Healthcheck: { Test: ['CMD', 'true'] },
  ExposedPorts: { '80/tcp': {} },
};

test('what the old container inherited from its old image is left out; what the user set is kept', (t) => {
  const old = inspect(
    {
      Env: ['PATH=/bin', 'VERSION=1', 'TZ=UTC'],
      Labels: {
        'org.opencontainers.image.version': '1',
        shared: 'user-override',
        'com.docker.compose.project': 'edge',
      },
      Cmd: ['serve'],
      Entrypoint: ['/custom-entry'],
      WorkingDir: '/app',
      Healthcheck: { Test: ['CMD', 'true'] },
      ExposedPorts: { '80/tcp': {}, '8080/tcp': {} },
    },
    { NetworkMode: 'none', RestartPolicy: { Name: 'unless-stopped', MaximumRetryCount: 0 }, Binds: ['/srv:/data'] },
  );
  const { create, connect } = recreateRequest(old, oldImage, 'proxy');
  t.is(create.name, 'proxy');
  t.is(create.Image, 'reg.example:5000/stack/proxy:3');
  t.deepEqual(create.Env, ['TZ=UTC']);
  t.deepEqual(create.Labels, { shared: 'user-override', 'com.docker.compose.project': 'edge' });
  t.deepEqual(create.ExposedPorts, { '8080/tcp': {} });
  t.deepEqual(create.Entrypoint, ['/custom-entry'], 'an explicit entrypoint stays');
  for (const key of ['Cmd', 'WorkingDir', 'Healthcheck', 'Hostname'] as const)
    t.false(key in create, `${key} comes from the new image`);
  t.deepEqual(create.HostConfig, {
    NetworkMode: 'none',
    RestartPolicy: { Name: 'unless-stopped', MaximumRetryCount: 0 },
    Binds: ['/srv:/data'],
  });
  t.is(create.NetworkingConfig, undefined, 'network mode none has no endpoints');
  t.deepEqual(connect, []);
});

test('without the old image (removed meanwhile) the old config is copied as it is, except the default hostname', (t) => {
  const old = inspect({ Env: ['A=1'], Cmd: ['x'], Hostname: 'proxy-host' }, { NetworkMode: 'host' });
  const { create } = recreateRequest(old, null, 'proxy');
  t.deepEqual(create.Env, ['A=1']);
  t.deepEqual(create.Cmd, ['x']);
  t.is(create.Hostname, 'proxy-host', 'a chosen hostname stays');
});

test('user networks: the host config network at create, the others connected after; the old short-id alias dropped', (t) => {
  const old = inspect(
    {},
    { NetworkMode: 'edge_front' },
    {
      edge_back: { Aliases: ['proxy', ID.slice(0, 12)], IPAMConfig: null, Links: null },
      edge_front: {
        Aliases: ['proxy', 'traefik', ID.slice(0, 12)],
        IPAMConfig: { IPv4Address: '172.30.0.10' },
        Links: null,
      },
    },
  );
  const { create, connect } = recreateRequest(old, null, 'proxy');
  t.deepEqual(Object.keys(create.NetworkingConfig!.EndpointsConfig!), ['edge_front']);
  t.deepEqual(create.NetworkingConfig!.EndpointsConfig!.edge_front.Aliases, ['proxy', 'traefik']);
  t.deepEqual(create.NetworkingConfig!.EndpointsConfig!.edge_front.IPAMConfig, { IPv4Address: '172.30.0.10' });
  t.deepEqual(
    connect.map((c) => [c.network, c.endpoint.Aliases]),
    [['edge_back', ['proxy']]],
  );
});

test("a container in another one's network namespace: pointed at the replacement, without hostname or ports", (t) => {
  const old = inspect(
    { Hostname: 'gerbil', ExposedPorts: { '51820/udp': {} } },
    { NetworkMode: `container:${'f'.repeat(64)}` },
  );
  const { create } = recreateRequest(old, null, 'newt', `container:${'e'.repeat(64)}`);
  t.is(create.HostConfig!.NetworkMode, `container:${'e'.repeat(64)}`);
  t.false('Hostname' in create);
  t.false('ExposedPorts' in create);
  t.is(networkTargetOf(`container:gerbil`), 'gerbil');
  t.is(networkTargetOf('none'), null);
});

test('healthchecks: NONE or none at all means "running for the stable time"', (t) => {
  t.true(hasHealthcheck({ Healthcheck: { Test: ['CMD-SHELL', 'wget -q localhost'] } }));
  t.false(hasHealthcheck({ Healthcheck: { Test: ['NONE'] } }));
  t.false(hasHealthcheck({}));
});

test('registryOf names the registry of a reference', (t) => {
  t.is(registryOf('traefik:v3.6'), 'docker.io');
  t.is(registryOf('fosrl/pangolin:1'), 'docker.io');
  t.is(registryOf('ghcr.io/org/img:2'), 'ghcr.io');
  t.is(registryOf('127.0.0.1:5000/stack/proxy:1'), '127.0.0.1:5000');
  t.is(registryOf('localhost/x'), 'localhost');
});
