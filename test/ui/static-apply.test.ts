/**
 * Entry points on the plugins screen (API.md §4.20), end to end: the fixture stack's routers use
 * tcp-2222, tcp-5432 and udp-19132; the list shows what is missing; "Sync" adds it to the static
 * config and Gerbil's ports; "Apply" runs the job on a private dockerd (Gerbil recreated with the
 * new ports, Traefik with it) and the card shows the steps, the wait for Traefik's entry points
 * (a fake Traefik API that lacks tcp-5432 until the test adds it) and the end.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { tempDir } from '../helpers/build.ts';
import { startFakeTraefikApi, type FakeTraefikApi } from '../helpers/fake-traefik-api.ts';
import { dockerSkipReason, type Engine } from '../containers/support.ts';
import { bindingsOf, composeWith, createPair, engineTests, OLD_PORTS, STATIC } from '../static/apply-support.ts';
import { ARTIFACTS, assertClean, uiTest, type UiTestOptions } from './browser.ts';

type Context = { engine?: Engine; files?: { dir: string; staticFile: string; composeFile: string } };
const { test } = engineTests<Pick<Context, 'files'>>('UI static apply tests');

const options: UiTestOptions<Context> = {
  test,
  serial: true,
  skip: dockerSkipReason(),
  config: async (t: ExecutionContext<Context>) => {
    const dir = await tempDir(t, 'sm-ui-apply-');
    const files = { dir, staticFile: path.join(dir, 'traefik.yml'), composeFile: path.join(dir, 'docker-compose.yml') };
    await writeFile(files.staticFile, STATIC);
    await writeFile(files.composeFile, composeWith(OLD_PORTS));
    t.context.files = files;
    return {
      docker: { host: '', socket: t.context.engine!.socket },
      stack: { containers: ['traefik', 'gerbil'], project: '', compose_file: files.composeFile },
      containers: { stop_timeout_s: 5, updates_ttl_s: 600, update_stable_s: 1 },
      proxy: { static_config_path: files.staticFile },
    };
  },
};

uiTest<Context>(
  'plugins screen: entry points missing → Sync adds and publishes them → Apply recreates gerbil and traefik, waits for tcp-5432 in Traefik, succeeded',
  async (t, { server, page, problems }) => {
    const { docker } = t.context.engine!;
    const files = t.context.files!;
    // gerbil's healthcheck looks for this file (bind-mounted at /flag)
    const flagDir = path.join(files.dir, 'flag');
    await mkdir(flagDir);
    await writeFile(path.join(flagDir, 'ok'), '');
    await createPair(docker, { flagDir }, OLD_PORTS);
    // the traefik data source: a fake Traefik API that lists everything but tcp-5432
    const traefik: FakeTraefikApi = await startFakeTraefikApi();
    t.teardown(() => traefik.close());
    traefik.lists.entrypoints = ['web', 'websecure', 'tcp-2222', 'udp-19132'].map((name) => ({ name }));
    const moved = await server.app.inject({
      method: 'PUT',
      url: '/api/datasource/traefik',
      payload: { url: traefik.url, timeout_ms: 60_000 },
    });
    t.is(moved.statusCode, 200, moved.body);

    await page.goto(`${server.url}/plugins`);
    const section = page.locator('[data-section="entrypoints"]');
    const row = (name: string) => section.locator(`tr[data-entrypoint="${name}"]`);
    await row('tcp-5432').getByText('missing').waitFor();
    await row('tcp-2222').getByText('not published').waitFor();
    t.regex(await row('tcp-2222').innerText(), /4-SSH-router/, 'the router using it is named');

    await section.getByRole('button', { name: 'Sync' }).click();
    const notice = section.getByRole('status');
    await notice.waitFor();
    t.is(
      await notice.innerText(),
      'Synced: added tcp-5432, udp-19132; published 2222:2222, 5432:5432, 19132:19132/udp on Gerbil. Apply to restart traefik and gerbil.',
    );
    await row('tcp-5432').getByText('present').waitFor();
    await row('tcp-5432').getByText('published', { exact: true }).waitFor();

    page.once('dialog', (dialog) => void dialog.accept());
    await section.getByRole('button', { name: 'Apply (restart Traefik, recreate Gerbil)' }).click();
    const card = section.locator('[data-job]');
    await card.waitFor();
    const wait = card.locator('[data-step="traefik:entrypoints"][data-step-status="running"]');
    await wait.waitFor();
    await card.getByText(/missing tcp-5432/).waitFor();
    t.regex(await card.locator('h3').innerText(), /^Apply of traefik, gerbil/);
    t.is(await card.locator('[data-step="gerbil:health"]').getAttribute('data-step-status'), 'ok');

    traefik.lists.entrypoints.push({ name: 'tcp-5432' });
    await section.locator('[data-job-status="succeeded"]').waitFor();
    t.regex(await card.innerText(), /Applied: every step finished\./);
    t.deepEqual(
      await card
        .locator('[data-step]')
        .evaluateAll((items) =>
          items.map((li) => `${li.getAttribute('data-step')}=${li.getAttribute('data-step-status')}`),
        ),
      [
        'gerbil:rename=ok',
        'gerbil:create=ok',
        'gerbil:start=ok',
        'gerbil:health=ok',
        'traefik:rename=ok',
        'traefik:create=ok',
        'traefik:start=ok',
        'traefik:health=ok',
        'gerbil:cleanup=ok',
        'traefik:cleanup=ok',
        'traefik:entrypoints=ok',
      ],
    );
    const gerbil = await docker.getContainer('gerbil').inspect();
    t.deepEqual(
      gerbil.HostConfig.PortBindings,
      bindingsOf([...OLD_PORTS, '2222:2222', '5432:5432', '19132:19132/udp']),
    );
    await mkdir(ARTIFACTS, { recursive: true });
    await section.screenshot({ path: path.join(ARTIFACTS, 'plugins-entrypoints-applied.png') });
    await assertClean(t, problems, 'plugins entry points');
  },
  options,
);
