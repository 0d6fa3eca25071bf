/**
 * The Traefik plugins screen with the real catalogue answer served locally: install from the
 * catalogue (restart-required notice, entry written to the static config), then remove it.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { assertClean, uiTest } from './browser.ts';
import { startFakeCatalogue } from '../plugins/support.ts';

uiTest(
  'plugins: install from the catalogue shows the restart notice and edits the static config; remove undoes it',
  async (t, { server, page, problems }) => {
    const staticConfig = path.join(path.dirname(server.dataDir), 'traefik.yml');
    await page.goto(`${server.url}/plugins`);
    await page.getByText('No plugins in the static configuration.').waitFor();
    await page.getByRole('button', { name: 'Load the plugin catalogue' }).click();
    const geoblock = page.locator('tr', { hasText: 'github.com/PascalMinder/geoblock' });
    await geoblock.getByRole('button', { name: 'Install' }).click();
    await page
      .getByRole('status')
      .getByText(/Restart Traefik to load it/)
      .waitFor();
    await page.locator('td code', { hasText: /^geoblock$/ }).waitFor();
    t.regex(await readFile(staticConfig, 'utf8'), /geoblock:\s+moduleName: github\.com\/PascalMinder\/geoblock/);

    page.once('dialog', (dialog) => void dialog.accept());
    await page.locator('tr', { hasText: 'geoblock' }).first().getByRole('button', { name: 'Remove' }).click();
    await page
      .getByRole('status')
      .getByText(/Removed geoblock\. Restart Traefik/)
      .waitFor();
    await page.getByText('No plugins in the static configuration.').waitFor();
    t.notRegex(await readFile(staticConfig, 'utf8'), /geoblock/);
    await assertClean(t, problems, 'plugins');
  },
  { config: async (t) => ({ plugins_catalogue: { url: (await startFakeCatalogue(t)).url, ttl_s: 3600 } }) },
);
