/** Discovery end to end: a Pangolin resource, discovered by Stack Manager, answers through a real Traefik. */
import test from 'ava';
import { startStack } from '../helpers/traefik-stack.ts';
import { traefikTest } from '../helpers/traefik.ts';

const e2e = traefikTest(test);

e2e('a Pangolin resource answers through Traefik on websecure, through the badger plugin', async (t) => {
  const { traefik, backends } = await startStack(t);
  const reply = await traefik.waitForReply(
    { entryPoint: 'websecure', host: 'app.test', path: '/hello' },
    (r) => r.status === 200,
  );
  t.is(reply.json.backend, 'a');
  t.is(reply.json.url, '/hello');
  // the local badger stub ran in the chain: it names the middleware it was built as
  t.is(reply.json.headers['x-badger-stub'], 'badger@http');
  t.is(backends[0].requests.at(-1)?.headers.host, 'app.test');
  const [router] = await traefik.waitForRouters(['1-app-router']);
  t.is(router.status, 'enabled');
});

e2e('the Pangolin-style -redirect router sends web to websecure', async (t) => {
  const { traefik, backends } = await startStack(t);
  const reply = await traefik.waitForReply(
    { entryPoint: 'web', host: 'app.test', path: '/x?y=1' },
    (r) => r.status !== 404,
  );
  t.true([301, 302, 307, 308].includes(reply.status), `status ${reply.status}`);
  t.is(reply.headers.location, 'https://app.test/x?y=1');
  t.is(backends[0].requests.length, 0);
});
