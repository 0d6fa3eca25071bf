/** container events (class O) from start/stop/restart against a private dockerd. */
import anyTest, { type TestFn } from 'ava';
import { build } from '../helpers/build.ts';
import { createContainer, dockerSkipReason, startEngine, type Engine } from '../containers/support.ts';
import { dataOf, listen, stream } from './support.ts';

const test = anyTest as TestFn<{ engine?: Engine }>;
const skip = dockerSkipReason();
if (skip) console.warn(`SKIP Docker event tests: ${skip}`);
const dockerTest = skip ? test.serial.skip : test.serial;

test.before(async (t) => {
  if (skip) return;
  t.context.engine = await startEngine();
  await createContainer(t.context.engine.docker, { name: 'sm-ev', state: 'exited' });
});

test.after.always(async (t) => {
  await t.context.engine?.stop();
});

dockerTest(
  'start, stop and restart publish container events with the state Docker reports; a stream without a token in ops mode gets none',
  async (t) => {
    const app = await build(t, {
      config: {
        auth: { mode: 'ops' },
        docker: { host: '', socket: t.context.engine!.socket },
        stack: { containers: ['sm-ev'], project: '' },
        containers: { stop_timeout_s: 5, updates_ttl_s: 600 },
      },
    });
    const operator = await app.auth.create('ev-operator', 'operator');
    if (operator === 'exists') throw new Error('token exists');
    const authorization = `Bearer ${operator.token}`;
    const base = await listen(app);
    const client = await stream(t, `${base}/api/events?types=container,upstream`, { authorization });
    const anonymous = await stream(t, `${base}/api/events?types=container,upstream`);

    for (const action of ['start', 'restart', 'stop']) {
      const response = await app.inject({
        method: 'POST',
        url: `/api/container/container/${action}`,
        headers: { authorization },
        payload: { container_name: 'sm-ev' },
      });
      t.is(response.statusCode, 200, response.body);
    }
    await client.next((e) => e.event === 'container' && JSON.parse(e.data).state === 'exited', 30_000, 2);
    t.deepEqual(dataOf(client, 'container'), [
      { name: 'sm-ev', state: 'running' },
      { name: 'sm-ev', state: 'running' },
      { name: 'sm-ev', state: 'exited' },
    ]);
    app.events.publish('upstream', { source: 'pangolin', state: 'ok', message: 'marker' });
    await anonymous.next((e) => e.event === 'upstream');
    t.deepEqual(
      anonymous.events.map((e) => e.event),
      ['upstream'],
    );
  },
);
