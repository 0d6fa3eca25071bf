/**
 * The compose file and plugins-local directory on the plugins screen (GET|PUT /api/static/settings):
 * a bad path shows the server's 422 at its field and saves nothing; a good one is saved, shown with
 * its source, kept after a reload, and the Entry points section uses the compose file at once
 * (Gerbil's ports known, Apply offers to recreate Gerbil); an emptied field clears it again.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ARTIFACTS, assertClean, uiTest } from './browser.ts';

const COMPOSE = `services:
  gerbil:
    image: fosrl/gerbil:1.0.0
    ports:
      - "80:80"
  traefik:
    image: traefik:v3.5
    network_mode: service:gerbil
`;

uiTest(
  'plugins screen: compose file and plugins-local dir — 422 at the field, save, shown with source, entry points use the compose file, cleared again',
  async (t, { server, page, problems }) => {
    const root = path.dirname(server.dataDir);
    const compose = path.join(root, 'docker-compose.yml');
    await writeFile(compose, COMPOSE);
    const localDir = path.join(root, 'plugins-local');
    await mkdir(localDir);
    problems.allow.push((url, status) => url.endsWith('/api/static/settings') && status === 422);

    await page.goto(`${server.url}/plugins`);
    const section = page.locator('[data-section="static-settings"]');
    const shown = (name: string) => section.locator(`li[data-setting="${name}"]`);
    const entryPoints = page.locator('[data-section="entrypoints"]');
    const gerbilCell = (name: string) => entryPoints.locator(`tr[data-entrypoint="${name}"] td`).nth(3);
    await shown('compose_file').getByText('not set', { exact: true }).waitFor();
    await gerbilCell('web').getByText('unknown').waitFor();
    await entryPoints.getByRole('button', { name: 'Apply (restart Traefik)' }).waitFor();

    // a relative path: the server's message at the field, nothing saved
    await section.locator('input[name="compose_file"]').fill('docker-compose.yml');
    await section.getByRole('button', { name: 'Save files' }).click();
    await section.locator('.field-error').getByText('must be an absolute path').waitFor();
    t.is(await section.getByRole('status').count(), 0);
    t.deepEqual((await server.app.inject({ url: '/api/static/settings' })).json().compose_file.source, 'unset');

    await section.locator('input[name="compose_file"]').fill(compose);
    await section.locator('input[name="plugins_local_dir"]').fill(localDir);
    await section.getByRole('button', { name: 'Save files' }).click();
    await section.getByRole('status').getByText('Saved compose_file and plugins_local_dir.').waitFor();
    t.is(await section.locator('.field-error').count(), 0, 'the old field error is gone');
    await shown('compose_file').getByText('(settings, exists, writable)').waitFor();
    t.is(await shown('compose_file').locator('code').innerText(), compose);
    t.is(await shown('plugins_local_dir').locator('code').innerText(), localDir);
    // the Entry points section reads the compose file now, without a restart
    await gerbilCell('web').getByText('published', { exact: true }).waitFor();
    await gerbilCell('tcp-2222').getByText('not published').waitFor();
    await entryPoints.getByRole('button', { name: 'Apply (restart Traefik, recreate Gerbil)' }).waitFor();
    const settingsFile = await readFile(path.join(server.dataDir, 'settings.yaml'), 'utf8');
    t.true(settingsFile.includes(`compose_file: ${compose}`), settingsFile);
    await mkdir(ARTIFACTS, { recursive: true });
    await section.screenshot({ path: path.join(ARTIFACTS, 'plugins-static-settings.png') });

    // after a reload the inputs hold what settings.yaml holds
    await page.reload();
    await shown('compose_file').getByText('(settings, exists, writable)').waitFor();
    t.is(await section.locator('input[name="compose_file"]').inputValue(), compose);
    t.is(await section.locator('input[name="plugins_local_dir"]').inputValue(), localDir);

    // an emptied field clears the setting: no compose file again
    await section.locator('input[name="compose_file"]').fill('');
    await section.getByRole('button', { name: 'Save files' }).click();
    await section.getByRole('status').getByText('Saved compose_file.').waitFor();
    await shown('compose_file').getByText('not set', { exact: true }).waitFor();
    await gerbilCell('web').getByText('unknown').waitFor();
    t.is(await shown('plugins_local_dir').locator('code').innerText(), localDir);

    // another static config path reloads the Entry points list too (tcp-2222 was missing before)
    const otherStatic = path.join(root, 'traefik-other.yml');
    await writeFile(otherStatic, 'entryPoints:\n  tcp-2222:\n    address: ":2222"\n');
    await page.locator('input[name="configpath"]').fill(otherStatic);
    await page.getByRole('button', { name: 'Set path' }).click();
    await page.getByRole('status').getByText('Static config path saved.').waitFor();
    await entryPoints.locator('tr[data-entrypoint="tcp-2222"]').getByText('present').waitFor();
    // web is not in that file; routers still use it, so it is listed as missing
    await entryPoints.locator('tr[data-entrypoint="web"]').getByText('missing').waitFor();
    await assertClean(t, problems, 'plugins static settings');
  },
);
