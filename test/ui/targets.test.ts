/**
 * The provider targets screen: a target created through the form is served at its URL, a Traefik
 * instance polling it shows as current, and a server validation error is shown at its field.
 */
import { assertClean, uiTest } from './browser.ts';
import { waitFor } from '../helpers/wait.ts';

uiTest(
  'a target created on the Targets screen is served, and the instance polling it shows as current',
  async (t, { server, page, problems }) => {
    // the validation error below is expected (shown at its field)
    problems.allow.push((url, status) => url.endsWith('/api/proxy-config/targets') && status === 422);
    await page.goto(`${server.url}/targets`);
    await page.locator('[data-target="default"]').waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Edge Lyon');
    await page.getByLabel('Include hosts').fill('cloud..example.com');
    await page.getByRole('button', { name: 'Create target' }).click();
    await page.locator('#target-form .field-error', { hasText: 'empty label' }).waitFor();

    await page.getByLabel('Include hosts').fill('cloud.example.com\ngrafana.example.com');
    await page.getByLabel('Entry point renames').fill('websecure=https');
    await page.getByRole('button', { name: 'Create target' }).click();
    const card = page.locator('[data-target="edge-lyon"]');
    await card.waitFor();
    t.regex(await card.innerText(), /\/api\/v1\/proxy-config\/edge-lyon/);

    const served = await waitFor(async () => {
      const res = await fetch(`${server.url}/api/v1/proxy-config/edge-lyon`, {
        headers: { 'user-agent': 'Traefik lyon' },
      });
      return res.status === 200
        ? ((await res.json()) as { http: { routers: Record<string, { entryPoints?: string[] }> } })
        : null;
    }, 1000);
    t.deepEqual(Object.keys(served.http.routers).sort(), [
      '1-Nextcloud-router',
      '1-Nextcloud-router-redirect',
      '2-Grafana-router',
      '2-Grafana-router-redirect',
    ]);
    t.deepEqual(served.http.routers['1-Nextcloud-router'].entryPoints, ['https']);

    await page.reload();
    const instance = page.locator('[data-target="edge-lyon"] [data-instance="Traefik lyon"]');
    await instance.waitFor();
    t.regex(await instance.innerText(), /current/);
    await assertClean(t, problems, 'targets');
  },
);
