/**
 * Operation screens against a private Docker engine: the containers screen lists the stack and
 * starts a stopped member (the state follows through the event stream); the logs screen tails a
 * container live over the WebSocket and pauses.
 */
import anyTest, { type TestFn } from 'ava';
import { assertClean, chromiumMissing, SKIP_MESSAGE, uiTest } from './browser.ts';
import {
  createContainer,
  dockerSkipReason,
  startEngine,
  stateOf,
  TEST_IMAGE,
  type Engine,
} from '../containers/support.ts';
import { waitFor } from '../helpers/wait.ts';

const test = anyTest as TestFn<{ engine?: Engine }>;
// a file-wide reason keeps the before hook from starting dockerd for tests that cannot run
const skip = chromiumMissing ? SKIP_MESSAGE : dockerSkipReason();

if (!skip) {
  test.before(async (t) => {
    const engine = await startEngine();
    t.context.engine = engine;
    // "traefik" writes a numbered line every 200 ms so the live tail has something to show
    const talker = await engine.docker.createContainer({
      name: 'ui-proxy',
      Image: TEST_IMAGE,
      Cmd: ['sh', '-c', 'i=0; while true; do i=$((i+1)); echo "tick $i"; sleep 0.2; done'],
      HostConfig: { NetworkMode: 'none', Init: true },
    });
    await talker.start();
    await createContainer(engine.docker, { name: 'ui-sec', state: 'exited' });
  });
  test.after.always(async (t) => {
    await t.context.engine?.stop();
  });
}

uiTest(
  'containers: the stack is listed and a stopped member starts from the UI; logs tail live and pause',
  async (t, { server, page, problems }) => {
    const engine = t.context.engine!;
    await page.goto(`${server.url}/containers`);
    await page.locator('tr[data-container="ui-proxy"]', { hasText: 'running' }).waitFor();
    await page.locator('tr[data-container="ui-missing"]', { hasText: 'missing' }).waitFor();
    const stopped = page.locator('tr[data-container="ui-sec"]');
    await stopped.locator('.badge', { hasText: /^exited$/ }).waitFor();
    await stopped.getByRole('button', { name: 'Start', exact: true }).click();
    await stopped.locator('.badge', { hasText: /^running$/ }).waitFor({ timeout: 60_000 });
    t.is(await stateOf(engine.docker, 'ui-sec'), 'running');

    await page.goto(`${server.url}/logs`);
    const view = page.locator('#log-view');
    await view
      .getByText(/tick \d+/)
      .first()
      .waitFor({ timeout: 120_000 });
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.locator('button[aria-pressed="true"]', { hasText: 'Resume' }).waitFor();
    const frozen = await view.innerText();
    const lastTick = (text: string) => Math.max(...[...text.matchAll(/tick (\d+)/g)].map((m) => Number(m[1])));
    // new lines keep arriving on the socket while paused; the view must not move
    await page.waitForTimeout(800); // a quiet period on purpose: the view must stay still while lines arrive
    t.is(lastTick(await view.innerText()), lastTick(frozen), 'paused view does not move');
    await page.getByRole('button', { name: 'Resume' }).click();
    await waitFor(async () => lastTick(await view.innerText()) > lastTick(frozen), 10_000);
    await page.getByLabel('Filter').fill('tick 1');
    const filtered = await view.innerText();
    t.true(
      filtered
        .split('\n')
        .filter(Boolean)
        .every((line) => line.includes('tick 1')),
      filtered.slice(0, 200),
    );
    await assertClean(t, problems, 'containers and logs');
  },
  {
    test,
    skip,
    config: (t) => ({
      docker: { host: '', socket: t.context.engine!.socket },
      stack: { containers: ['ui-proxy', 'ui-sec', 'ui-missing'], project: '' },
      logs: { services: { proxy: 'ui-proxy', secengine: 'ui-sec', tunnelapp: 'newt', tunnelgw: 'gerbil' } },
    }),
  },
);
