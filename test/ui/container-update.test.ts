/**
 * The update job on the Containers screen, end to end: a private dockerd runs stack containers
 * from a real registry (docker-registry) that then gets a newer image. In the browser the operator
 * checks for updates, sees "update available", starts the update, watches the steps advance
 * through the event stream, and sees the end: succeeded (and up to date), or failed at the health
 * check with the old container rolled back and running again.
 */
import type { ExecutionContext } from 'ava';
import type { Page } from 'playwright-core';
import { assertClean, uiTest, type UiTestOptions } from './browser.ts';
import { buildAndPush, publishNewer, registrySkipReason, type Registry } from '../containers/registry.ts';
import { dockerSkipReason, type Engine } from '../containers/support.ts';
import { createService, engineAndRegistryTests } from '../containers/update-support.ts';

type Context = { engine?: Engine; registry?: Registry };
const { test } = engineAndRegistryTests('UI container update tests');

/**
 * The UI's server on the private engine; a new container counts as healthy after 3 s running, so
 * the health step is seen running. Serial: the tests share the engine and the registry.
 */
const options: UiTestOptions<Context> = {
  test,
  serial: true,
  skip: dockerSkipReason() ?? registrySkipReason(),
  config: (t: ExecutionContext<Context>) => ({
    docker: { host: '', socket: t.context.engine!.socket },
    stack: { containers: ['ui-upd-ok', 'ui-upd-bad'], project: '' },
    containers: { stop_timeout_s: 5, updates_ttl_s: 600, update_stable_s: 3 },
  }),
};

interface JobFrame {
  status: string | null;
  percent: number;
  steps: string;
}

/**
 * Records every state the job card goes through (a MutationObserver in the page), so the test sees
 * progress it might otherwise miss between two looks. A string, not a function: tsx's keepNames
 * helper (__name) does not exist in the page.
 */
const RECORD_JOB_FRAMES = `(() => {
  const frames = (window.jobFrames = []);
  new MutationObserver(() => {
    const card = document.querySelector('[data-job]');
    if (!card) return;
    const frame = {
      status: card.getAttribute('data-job-status'),
      percent: Number(card.querySelector('[role=progressbar]')?.getAttribute('aria-valuenow')),
      steps: [...card.querySelectorAll('[data-step]')].map((li) => li.getAttribute('data-step') + '=' + li.getAttribute('data-step-status')).join(' '),
    };
    const last = frames.at(-1);
    if (!last || last.status !== frame.status || last.percent !== frame.percent || last.steps !== frame.steps) frames.push(frame);
  }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
})()`;

const recordJobFrames = (page: Page) => page.evaluate(RECORD_JOB_FRAMES);
const jobFrames = (page: Page) => page.evaluate('window.jobFrames') as Promise<JobFrame[]>;

/** Opens the Containers screen with a live event stream, checks for updates and starts the update of `service`. */
async function startUpdateFromUi(page: Page, url: string, service: string) {
  await page.goto(`${url}/containers`);
  await page.waitForFunction(() => document.querySelector('.live')?.getAttribute('data-live') === 'live');
  const row = page.locator(`tr[data-container="${service}"]`);
  await row.locator('.badge', { hasText: /^running$/ }).waitFor();
  await page.getByRole('button', { name: 'Check for image updates' }).click();
  await row.getByText('update available').waitFor();
  await recordJobFrames(page);
  page.once('dialog', (dialog) => void dialog.accept());
  await row.getByRole('button', { name: 'Update', exact: true }).click();
  const card = page.locator('[data-job]');
  await card.waitFor();
  return { row, card };
}

uiTest(
  'update from the Containers screen: update available → steps advance live (running, then ok) → succeeded, and the row says up to date on the new image',
  async (t, { server, page, problems }) => {
    const engine = t.context.engine!;
    const reference = `${t.context.registry!.host}/stack/ui-upd-ok:1`;
    const v1 = await buildAndPush(engine, reference, { content: 'v1' });
    const old = await createService(engine.docker, { name: 'ui-upd-ok', image: reference });
    const v2 = await publishNewer(engine, reference, v1.id, { content: 'v2' });
    let jobPolls = 0;
    page.on('request', (request) => void (/\/api\/jobs\/job-/.test(request.url()) && jobPolls++));

    const { row, card } = await startUpdateFromUi(page, server.url, 'ui-upd-ok');
    await page.locator('[data-job-status="succeeded"]').waitFor();
    t.regex(await card.innerText(), /Updated: every step finished\./);
    t.is(await card.getByRole('progressbar').getAttribute('aria-valuenow'), '100');
    const steps = (await jobFrames(page)).at(-1)!.steps.split(' ');
    t.deepEqual(steps, [
      'job:backup=ok',
      'ui-upd-ok:pull=ok',
      'ui-upd-ok:rename=ok',
      'ui-upd-ok:create=ok',
      'ui-upd-ok:start=ok',
      'ui-upd-ok:health=ok',
      'ui-upd-ok:cleanup=ok',
    ]);
    t.regex(
      await card.locator('[data-step="job:backup"]').innerText(),
      /backup \S+ created/,
      'the pre-update backup is named',
    );

    // progress was seen advancing, not just the end: the health step running (3 s) between 0 and 100 %
    const frames = await jobFrames(page);
    t.log(
      `${frames.length} job states seen in the page, ${jobPolls} GET /api/jobs/:id (the rest came over the event stream)`,
    );
    t.true(
      frames.some(
        (f) =>
          f.status === 'running' && f.steps.includes('ui-upd-ok:health=running') && f.percent > 0 && f.percent < 100,
      ),
      JSON.stringify(frames, null, 1),
    );
    const percents = frames.map((f) => f.percent);
    t.deepEqual(
      percents,
      [...percents].sort((a, b) => a - b),
      'progress never goes back',
    );
    t.true(frames.length >= 4, `several states seen: ${JSON.stringify(frames)}`);

    // the finished job reloads the row: the new container, and the update check now says up to date
    await row.getByText('up to date').waitFor();
    const now = await engine.docker.getContainer('ui-upd-ok').inspect();
    t.is(now.Image, v2.id, 'the container runs v2');
    t.not(now.Id, old.Id);

    // a job started before the page opened (here: before a reload) is still shown, with its end
    await page.reload();
    await page.locator('[data-job-status="succeeded"] [data-step="ui-upd-ok:health"][data-step-status="ok"]').waitFor();
    await assertClean(t, problems, 'containers update');
  },
  options,
);

uiTest(
  'a failing update is shown as it is: failed at health, the error from the server, the rollback step ok, "Rolled back" said, and the old container running',
  async (t, { server, page, problems }) => {
    const engine = t.context.engine!;
    const reference = `${t.context.registry!.host}/stack/ui-upd-bad:1`;
    const v1 = await buildAndPush(engine, reference, { content: 'v1', healthcheck: 'true' });
    const old = await createService(engine.docker, { name: 'ui-upd-bad', image: reference });
    await publishNewer(engine, reference, v1.id, { content: 'v2', healthcheck: 'false' });

    const { row, card } = await startUpdateFromUi(page, server.url, 'ui-upd-bad');
    await page.locator('[data-job-status="failed"]').waitFor();
    const alert = card.getByRole('alert');
    t.regex(
      await alert.innerText(),
      /^Update failed\s+update of ui-upd-bad failed at health: the healthcheck reports unhealthy.*; rolled back: ui-upd-bad/s,
    );
    t.is(await card.locator('[data-step="ui-upd-bad:health"]').getAttribute('data-step-status'), 'failed');
    t.is(await card.locator('[data-step="ui-upd-bad:rollback"]').getAttribute('data-step-status'), 'ok');
    t.is(await card.locator('[data-step="ui-upd-bad:cleanup"]').getAttribute('data-step-status'), 'skipped');
    t.regex(
      await card.locator('.job-summary').innerText(),
      /^Rolled back: ui-upd-bad runs the previous image again\.$/,
    );
    t.false((await card.innerText()).includes('Updated: every step finished'));
    const frames = await jobFrames(page);
    t.true(
      frames.some((f) => f.status === 'running' && f.percent < 100),
      JSON.stringify(frames, null, 1),
    );

    // the row is still the old container, running, and the update is still available
    await row.locator('.badge', { hasText: /^running$/ }).waitFor();
    await row.getByText('update available').waitFor();
    const now = await engine.docker.getContainer('ui-upd-bad').inspect();
    t.is(now.Id, old.Id, 'the old container, under its old name');
    t.true(now.State.Running);
    await assertClean(t, problems, 'containers failed update');
  },
  options,
);
