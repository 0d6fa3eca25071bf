/** The compose file's `services.gerbil.ports` as Docker port bindings (API.md §4.20 apply). */
import test from 'ava';
import type Docker from 'dockerode';
import { parseDotEnv } from '../../plugins/static/compose-env.ts';
import {
  PortItemError,
  portBindings,
  publishesPort,
  sameBindings,
  unreadableItemsFor,
  withBindings,
} from '../../plugins/static/gerbil-ports.ts';

test('short syntax: host:container, /udp, a host address, IPv6 in brackets, a bare port and ranges', (t) => {
  t.deepEqual(
    portBindings([
      '51820:51820/udp',
      '443:443',
      80,
      '127.0.0.1:2222:22',
      '[::1]:8443:443',
      '9000',
      '127.0.0.1::9001',
      '7000-7001:8000-8001',
      '5000-5010:5000',
    ]),
    {
      '51820/udp': [{ HostIp: '', HostPort: '51820' }],
      '443/tcp': [
        { HostIp: '', HostPort: '443' },
        { HostIp: '::1', HostPort: '8443' },
      ],
      '80/tcp': [{ HostIp: '', HostPort: '' }],
      '22/tcp': [{ HostIp: '127.0.0.1', HostPort: '2222' }],
      '9000/tcp': [{ HostIp: '', HostPort: '' }],
      '9001/tcp': [{ HostIp: '127.0.0.1', HostPort: '' }],
      '8000/tcp': [{ HostIp: '', HostPort: '7000' }],
      '8001/tcp': [{ HostIp: '', HostPort: '7001' }],
      '5000/tcp': [{ HostIp: '', HostPort: '5000-5010' }],
    },
  );
});

test('long syntax: target, published, host_ip and protocol', (t) => {
  t.deepEqual(
    portBindings([
      { target: 51820, published: '51820', protocol: 'udp', mode: 'host' },
      { target: 80, host_ip: '0.0.0.0', published: 8080 },
      { target: 443 },
    ]),
    {
      '51820/udp': [{ HostIp: '', HostPort: '51820' }],
      '80/tcp': [{ HostIp: '0.0.0.0', HostPort: '8080' }],
      '443/tcp': [{ HostIp: '', HostPort: '' }],
    },
  );
});

test('items that cannot be published throw PortItemError naming the item', (t) => {
  const cases: Array<[unknown, RegExp]> = [
    ['${SSH_PORT}:22', /SSH_PORT is not set in \.env and has no default/],
    ['$:22', /neither \$NAME/],
    ['70000:70000', /outside 1-65535/],
    ['80:http', /not a port/],
    ['7000-7002:8000-8001', /differ in length/],
    ['1-2000:1-2000', /more than 1000/],
    ['53:53/icmp', /protocol "icmp"/],
    [{ published: 80 }, /target is missing/],
    [['80:80'], /neither/],
  ];
  for (const [item, message] of cases) {
    const err = t.throws(() => portBindings(['443:443', item]), { instanceOf: PortItemError, message });
    t.is(err?.index, 1, JSON.stringify(item));
  }
});

test('publishesPort reads items as the apply job does: ranges, long syntax, .env variables; an unusable item publishes nothing', (t) => {
  const vars = parseDotEnv('PG_PORT=5432\n', '.env');
  const items = [
    '7000-7010:7000-7010',
    { target: 19132, published: 19132, protocol: 'udp' },
    '${PG_PORT}:${PG_PORT}',
    '${UNSET}:25',
    '443:443/bogus',
    'x:53/udp',
  ];
  t.true(publishesPort(items, vars, 7005, 'tcp'));
  t.false(publishesPort(items, vars, 7005, 'udp'));
  t.true(publishesPort(items, vars, 19132, 'udp'));
  t.true(publishesPort(items, vars, 5432, 'tcp'));
  t.false(publishesPort(items, vars, 25, 'tcp'), 'an unset variable without a default: apply refuses the item');
  t.false(publishesPort(items, vars, 443, 'tcp'), 'an unknown protocol: apply refuses the item');
  t.false(publishesPort(items, vars, 53, 'udp'));
});

test('unreadableItemsFor: the items publishesPort could not read that could publish the port, by container port and protocol', (t) => {
  const vars = parseDotEnv('PG_PORT=5432\n', '.env');
  const items = [
    '80:80',
    '${SSH_PORT}:2222',
    '${WG_PORT}:${WG_PORT}/udp',
    { target: '${DB_PORT}', published: '${DB_PORT}' },
    '${PG_PORT}:${PG_PORT}',
    '443:443/bogus',
  ];
  const indexes = (port: number, protocol: string) =>
    unreadableItemsFor(items, vars, port, protocol).map((found) => found.index);
  // the host port is a variable, the container port 2222 is written: only 2222/tcp
  t.deepEqual(indexes(2222, 'tcp'), [1, 3, 5]);
  // variables decide the container port: any port of the item's protocol
  t.deepEqual(indexes(19132, 'udp'), [2, 5]);
  t.deepEqual(indexes(5432, 'tcp'), [3, 5], 'PG_PORT has a value: read, not listed');
  const [ssh] = unreadableItemsFor(items, vars, 2222, 'tcp');
  t.like(ssh, { index: 1, item: '${SSH_PORT}:2222', usesVariables: true });
  t.regex(ssh.message, /SSH_PORT is not set in \.env and has no default/);
  t.like(unreadableItemsFor(items, vars, 2222, 'tcp')[2], { index: 5, usesVariables: false });
  t.regex(unreadableItemsFor(items, vars, 2222, 'tcp')[2].message, /protocol "bogus"/);
});

test('sameBindings ignores order and takes 0.0.0.0 for every address; withBindings replaces bindings and exposed ports', (t) => {
  const wanted = portBindings(['443:443', '51820:51820/udp']);
  t.true(
    sameBindings(
      { '51820/udp': [{ HostIp: '0.0.0.0', HostPort: '51820' }], '443/tcp': [{ HostIp: '', HostPort: '443' }] },
      wanted,
    ),
  );
  t.false(sameBindings({ '443/tcp': [{ HostIp: '', HostPort: '443' }] }, wanted));
  t.false(sameBindings(null, wanted));
  t.true(sameBindings(undefined, {}));

  const old = {
    HostConfig: { PortBindings: { '80/tcp': [{ HostIp: '', HostPort: '80' }] } },
  } as unknown as Docker.ContainerInspectInfo;
  const create: Docker.ContainerCreateOptions = {
    ExposedPorts: { '80/tcp': {}, '9999/tcp': {} },
    HostConfig: { NetworkMode: 'none', PortBindings: { '80/tcp': [{ HostIp: '', HostPort: '80' }] } },
  };
  const note = withBindings(create, old, wanted);
  t.deepEqual(create.HostConfig?.PortBindings, wanted);
  t.is(create.HostConfig?.NetworkMode, 'none', 'the rest of the host config stays');
  t.deepEqual(
    Object.keys(create.ExposedPorts ?? {}).sort(),
    ['443/tcp', '51820/udp', '9999/tcp'],
    'a port exposed only for the old binding goes; one exposed on its own stays',
  );
  t.is(note, 'published ports 443 → 443/tcp, 51820 → 51820/udp (from the compose file)');
});
