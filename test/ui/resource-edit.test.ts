/**
 * Own resources in the UI (API.md §4.24): the "New resource" form creates a local resource (hosts,
 * path prefix, server URLs) whose router is in the provider document, a server validation error
 * shows at its field, the edit screen loads it back and saves a change, and Delete removes it.
 */
import { assertClean, uiTest } from './browser.ts';
import { waitFor } from '../helpers/wait.ts';

type Doc = { http: { routers: Record<string, { rule: string; service: string; entryPoints?: string[] }> } };

uiTest(
  'New resource creates a local router; the edit screen changes it; Delete removes it',
  async (t, { server, page, problems }) => {
    // the validation error below is expected (shown at its field)
    problems.allow.push((url, status) => url.endsWith('/api/resources') && status === 422);
    const doc = async () => (await (await fetch(`${server.url}/api/v1/proxy-config`)).json()) as Doc;

    await page.goto(`${server.url}/resources`);
    await page.getByRole('link', { name: 'New resource' }).click();
    await page.getByRole('heading', { name: 'New resource' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Internal dashboard');
    await page.getByLabel('Id (optional)').fill('dash');
    await page.getByLabel('Hosts (one per line)').fill('dash.internal.test\nbad host');
    await page.getByLabel('Path prefix (optional)').fill('/ui');
    await page.getByLabel('Server URLs (one per line)').fill('http://10.0.0.9:8080');
    await page.getByRole('button', { name: 'Create resource' }).click();
    await page.locator('#resource-form .field-error').first().waitFor();
    t.regex(await page.locator('#resource-form .field-error').first().innerText(), /1:/);

    await page.getByLabel('Hosts (one per line)').fill('dash.internal.test\ndash2.internal.test');
    await page.getByRole('button', { name: 'Create resource' }).click();
    await page.waitForURL(/\/resources\/dash$/);
    await page.getByText('dash@http').waitFor();
    t.regex(
      await page.locator('.kv').innerText(),
      /\(Host\(`dash\.internal\.test`\) \|\| Host\(`dash2\.internal\.test`\)\) && PathPrefix\(`\/ui`\)/,
    );
    const created = await waitFor(async () => (await doc()).http.routers.dash, 1000);
    t.is(created.service, 'dash-service');
    t.deepEqual(created.entryPoints, ['websecure']);

    // the edit screen loads the stored fields back; a new path prefix and entry point are saved
    await page.getByRole('link', { name: 'Edit' }).click();
    await page.getByRole('heading', { name: 'Edit Internal dashboard' }).waitFor();
    t.is(await page.getByLabel('Hosts (one per line)').inputValue(), 'dash.internal.test\ndash2.internal.test');
    t.is(await page.getByLabel('Path prefix (optional)').inputValue(), '/ui');
    await waitFor(
      async () => (await page.getByLabel('Server URLs (one per line)').inputValue()) === 'http://10.0.0.9:8080',
      1000,
    );
    await page.getByLabel('Path prefix (optional)').fill('/v2');
    await page.getByLabel('Entry points (comma separated)').fill('web');
    await page.getByLabel('TLS').uncheck();
    await page.getByRole('button', { name: 'Save resource' }).click();
    await page.waitForURL(/\/resources\/dash$/);
    const edited = await waitFor(async () => {
      const router = (await doc()).http.routers.dash;
      return router?.rule.includes('/v2') ? router : null;
    }, 1000);
    t.deepEqual(edited.entryPoints, ['web']);
    t.is(edited.service, 'dash-service');

    // Delete (an own resource may be deleted while active)
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.waitForURL(/\/resources$/);
    await waitFor(async () => !(await doc()).http.routers.dash, 1000);
    t.is((await fetch(`${server.url}/api/services/dash-service`)).status, 404);
    await assertClean(t, problems, 'resource edit');
  },
);

uiTest(
  'Data sources: "Use no data source" switches to mode none and says so',
  async (t, { server, page, problems }) => {
    await page.goto(`${server.url}/datasources`);
    await page.getByRole('button', { name: 'Use no data source (own objects only)' }).waitFor();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Use no data source (own objects only)' }).click();
    await page.locator('[data-mode="none"]').waitFor();
    const status = (await (await fetch(`${server.url}/api/proxy-config/status`)).json()) as { mode: string };
    t.is(status.mode, 'none');
    const doc = await waitFor(async () => {
      const body = (await (await fetch(`${server.url}/api/v1/proxy-config`)).json()) as { http?: { routers?: object } };
      return Object.keys(body.http?.routers ?? {}).length === 0 ? body : null;
    }, 1000);
    t.deepEqual(Object.keys(doc.http?.routers ?? {}), []);
    t.is(await page.getByRole('button', { name: 'Use no data source (own objects only)' }).count(), 0);
    await assertClean(t, problems, 'datasources');
  },
);
