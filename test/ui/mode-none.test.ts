/**
 * The UI in data source mode none (API.md §4.24): `GET /api/datasource/active` answers 404 there by
 * contract, and the UI's session probe used it on every page load, so every screen had a failed
 * request and a console error. The screens load cleanly, and after a switch from a failing source
 * the dashboard says that nothing is polled instead of that source's error in red.
 */
import { assertClean, uiTest } from './browser.ts';

uiTest(
  'mode none after a failing source: screens load without error answers, the dashboard shows no upstream error',
  async (t, { server, page, problems }) => {
    server.fake.state.fault = '500';
    t.false((await server.app.resources.syncNow()).ok);
    const switched = await fetch(`${server.url}/api/datasource/active`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'none' }),
    });
    t.is(switched.status, 204);
    // the fake is the Traefik API too (the dashboard's Traefik card): only the Pangolin sync was to fail
    server.fake.state.fault = null;
    t.is((await fetch(`${server.url}/api/datasource/active`)).status, 404);
    for (const [path, heading] of [
      ['/resources', 'Resources'],
      ['/middlewares/new', 'New middleware'],
      ['/datasources', 'Data sources'],
      ['/', 'Dashboard'],
    ]) {
      await page.goto(`${server.url}${path}`);
      await page.getByRole('heading', { name: heading, exact: true }).waitFor();
    }
    const card = page.locator('#provider-status');
    await card.locator('[data-upstream="none"]').waitFor();
    t.regex(await card.innerText(), /nothing is polled/);
    t.is(await card.locator('[data-upstream-error]').count(), 0);
    t.is(await card.getByText('stale', { exact: true }).count(), 0);
    t.is(await page.getByRole('button', { name: 'Regenerate', exact: true }).count(), 1);
    await assertClean(t, problems, 'mode none screens');
  },
);
