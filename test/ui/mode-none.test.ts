/**
 * The UI in data source mode none (API.md §4.24): `GET /api/datasource/active` answers 404 there by
 * contract, and the UI's session probe used it on every page load, so every screen had a failed
 * request and a console error. The screens load cleanly and the dashboard says the mode.
 */
import { assertClean, uiTest } from './browser.ts';

uiTest(
  'mode none: the dashboard and the configuration screens load without error answers',
  async (t, { server, page, problems }) => {
    const switched = await fetch(`${server.url}/api/datasource/active`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'none' }),
    });
    t.is(switched.status, 204);
    t.is((await fetch(`${server.url}/api/datasource/active`)).status, 404);
    for (const [path, heading] of [
      ['/', 'Dashboard'],
      ['/resources', 'Resources'],
      ['/middlewares/new', 'New middleware'],
      ['/datasources', 'Data sources'],
    ]) {
      await page.goto(`${server.url}${path}`);
      await page.getByRole('heading', { name: heading, exact: true }).waitFor();
    }
    // the data sources screen tells the mode; configuration screens stay writable without a token
    await page.locator('[data-mode="none"]').waitFor();
    t.is(
      await page
        .getByRole('link', { name: 'Add a source' })
        .or(page.getByRole('button', { name: 'Add a source' }))
        .count(),
      1,
    );
    await assertClean(t, problems, 'mode none screens');
  },
);
