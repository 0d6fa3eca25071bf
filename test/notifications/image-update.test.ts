/**
 * API.md §4.21 `containers`: an image update available (info), once per new registry digest, from
 * the update check (GET /api/container/updates) against a private dockerd and a private registry,
 * to a real webhook receiver.
 */
import { createService, engineAndRegistryTests, updateApp } from '../containers/update-support.ts';
import { buildAndPush, publishNewer } from '../containers/registry.ts';
import { waitFor } from '../helpers/wait.ts';
import { addChannel, quietUpstream, startReceiver } from './support.ts';

const { updateTest } = engineAndRegistryTests('notifications image-update test');

updateTest('an available image update is told once per new digest, not on every check', async (t) => {
  const engine = t.context.engine!;
  const reference = `${t.context.registry!.host}/stack/svc-ok:1`;
  const v1 = await buildAndPush(engine, reference, { content: 'v1' });
  await createService(engine.docker, { name: 'svc-ok', image: reference });
  const server = await updateApp(t, engine, 1, {
    notifications: { tick_ms: 20, ...quietUpstream },
  });
  const receiver = await startReceiver(t);
  await addChannel(server, {
    name: 'ops',
    type: 'webhook',
    config: { url: receiver.url },
    categories: ['containers'],
    min_severity: 'info',
  });
  const check = async () => {
    const reply = await server.inject({ url: '/api/container/updates?refresh=true' });
    t.is(reply.statusCode, 200, reply.body);
    return (reply.json() as Array<Record<string, unknown>>).find((u) => u.service === 'svc-ok')!;
  };
  const bodies = () => receiver.received.map((request) => JSON.parse(request.body) as Record<string, string>);

  // up to date: nothing to tell
  t.like(await check(), { update_available: false, current_digest: v1.digest });

  const v2 = await publishNewer(engine, reference, v1.id, { content: 'v2' });
  t.like(await check(), { update_available: true, latest_digest: v2.digest });
  await waitFor(() => receiver.received.length >= 1, 2_000);
  // the same digest checked again: no second message
  t.like(await check(), { update_available: true, latest_digest: v2.digest });

  // a newer one still: told again
  const v3 = await publishNewer(engine, reference, v1.id, { content: 'v3' });
  t.like(await check(), { update_available: true, latest_digest: v3.digest });
  await waitFor(() => receiver.received.length >= 2, 2_000);

  t.deepEqual(
    bodies().map((body) => `${body.category} ${body.severity} ${body.title}`),
    ['containers info Image update available: svc-ok', 'containers info Image update available: svc-ok'],
  );
  t.true(bodies()[0].message.includes(v2.digest), bodies()[0].message);
  t.true(bodies()[1].message.includes(v3.digest), bodies()[1].message);
  t.true(bodies()[1].message.includes(`running ${v1.digest}`), bodies()[1].message);
});
