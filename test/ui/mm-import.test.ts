/**
 * "Import from middleware-manager" on the middlewares screen (API.md §4.24): choosing the database
 * file shows the dry run's report and writes nothing; "Import" creates the middlewares, which the
 * list then shows, and the resource gets its assignment.
 */
import path from 'node:path';
import { mkdir } from 'node:fs/promises';
import { mmDatabase } from '../import/mm-db.ts';
import { ARTIFACTS, assertClean, uiTest } from './browser.ts';

uiTest(
  'middlewares: Import from middleware-manager previews a dry run, then imports and lists the new middlewares',
  async (t, { server, page, problems }) => {
    const bytes = await mmDatabase({
      middlewares: [
        {
          id: 'authelia',
          name: 'Authelia',
          type: 'forwardAuth',
          config: { address: 'http://authelia:9091/api/authz/forward-auth' },
        },
        { id: 'rate-limit', name: 'Rate Limit', type: 'rateLimit', config: { average: 100, burst: 50 } },
        { id: 'conn-limit', name: 'Conn limit', type: 'inFlightConn', config: { amount: 10 } },
      ],
      resources: [{ id: '1-Nextcloud-router', host: 'cloud.example.com' }],
      assignments: [{ resource_id: '1-Nextcloud-router', middleware_id: 'authelia', priority: 150 }],
    });
    await page.goto(`${server.url}/middlewares`);
    await page.getByRole('button', { name: 'Import from middleware-manager' }).click();
    await page.locator('input[data-mm-import-file]').setInputFiles({
      name: 'middleware.db',
      mimeType: 'application/octet-stream',
      buffer: bytes,
    });
    const preview = page.locator('[data-mm-import-report="dry-run"]');
    await preview.waitFor();
    t.regex(
      await preview.innerText(),
      /Would create: 2 middlewares, 0 services, 1 assignments, 0 overrides; 1 skipped/,
    );
    t.is(await preview.locator('[data-skipped="middleware"]').count(), 1);
    t.deepEqual(await server.app.middlewares.list(), [], 'the preview wrote nothing');
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'mm-import-preview.png'), fullPage: true });

    await page.getByRole('button', { name: 'Import', exact: true }).click();
    const done = page.locator('[data-mm-import-report="done"]');
    await done.waitFor();
    t.regex(await done.innerText(), /Created: 2 middlewares/);
    await page.getByRole('button', { name: 'Close' }).click();
    await page.locator('tr[data-middleware="authelia"]').waitFor();
    await page.locator('tr[data-middleware="rate-limit"]').waitFor();
    const nextcloud = server.app.resources.views().find((r) => r.id === '1-nextcloud-router');
    t.deepEqual(nextcloud?.middlewares, [{ id: 'authelia', priority: 150 }]);
    await page.screenshot({ path: path.join(ARTIFACTS, 'mm-import-done.png'), fullPage: true });
    await assertClean(t, problems, '/middlewares');
  },
);
