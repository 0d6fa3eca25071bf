/**
 * Through the UI only: create a middleware from a shipped template, assign it to a resource on the
 * resource's page, then the provider output (GET /api/proxy-config) routes that resource through it.
 * Also: a validation error from the server is shown at the field it names.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { ARTIFACTS, assertClean, uiTest } from './browser.ts';
import { waitFor } from '../helpers/wait.ts';

uiTest(
  'a middleware created from a template and assigned in the UI appears in the provider output',
  async (t, { server, page, problems }) => {
    await page.goto(`${server.url}/middlewares/new`);
    await page.getByLabel('Start from a template').selectOption('rate-limit');
    await page.getByLabel('Name', { exact: true }).fill('Gentle rate limit');
    await page.getByLabel('Id (optional)').fill('gentle-rate');
    await page.getByRole('button', { name: 'Create middleware' }).click();
    await page.waitForURL(`${server.url}/middlewares/gentle-rate`);
    await page.getByRole('heading', { level: 1, name: 'Gentle rate limit' }).waitFor();

    await page.goto(`${server.url}/resources`);
    await page.getByRole('link', { name: '1-Nextcloud-router' }).click();
    await page.getByLabel('Middleware', { exact: true }).selectOption('gentle-rate');
    await page.getByLabel('Priority (higher runs first)').fill('300');
    await page.getByRole('button', { name: 'Assign', exact: true }).click();
    await page.locator('#assigned-middlewares tr[data-middleware="gentle-rate"]').waitFor();

    const routers = await waitFor(async () => {
      const config = (await (await fetch(`${server.url}/api/proxy-config`)).json()) as {
        http: { routers: Record<string, { middlewares?: string[] }>; middlewares: Record<string, unknown> };
      };
      return config.http.routers['1-Nextcloud-router']?.middlewares?.includes('gentle-rate') ? config : null;
    }, 10_000);
    t.truthy(routers.http.middlewares['gentle-rate'], 'the middleware itself is emitted');
    t.is(
      routers.http.routers['1-Nextcloud-router'].middlewares![0],
      'gentle-rate',
      'priority 300 puts it before the upstream middlewares',
    );

    // a README-sized picture of this page in dark (artefact; docs/img/ holds the committed copy)
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.setViewportSize({ width: 1100, height: 640 });
    // the event stream is open (the indicator's state, whether or not the layout shows it at this width)
    await page.waitForFunction(() => document.querySelector('.live')?.getAttribute('data-live') === 'live');
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'readme-resource-dark.png') });
    // the effective router tab shows the same list the provider serves
    await page.getByRole('tab', { name: 'Effective router' }).click();
    await page.locator('#effective-router').getByText('gentle-rate').first().waitFor();
    await assertClean(t, problems, 'middleware flow');
  },
);

uiTest('a server validation message is shown at the form field it names', async (t, { server, page, problems }) => {
  problems.allow.push((url, status) => url.endsWith('/api/middlewares') && (status === 422 || status === 409));
  await page.goto(`${server.url}/middlewares/new`);
  await page.getByLabel('Type').selectOption('rateLimit');
  await page.getByLabel('Name', { exact: true }).fill('Broken limit');
  await page.getByRole('tab', { name: 'YAML' }).click();
  const editor = page.locator('.cm-content');
  await editor.click();
  await page.keyboard.press('Control+A');
  await page.keyboard.insertText('average: 5\naverag: 10\n');
  await page.getByRole('button', { name: 'Create middleware' }).click();
  // the server names /config/averag: the editor marks exactly that key
  const marked = page.locator('.cm-lintRange-error');
  await marked.waitFor();
  t.is(await marked.innerText(), 'averag');
  t.is(await page.locator('.error-box code.error-id').innerText(), 'validation_failed');
  t.regex(await page.locator('.error-box').innerText(), /averag is not a known field of the rateLimit middleware/);

  // the same message at a form field: a name that is taken
  await editor.click();
  await page.keyboard.press('Control+A');
  await page.keyboard.insertText('average: 5\n');
  await page.getByRole('button', { name: 'Create middleware' }).click();
  await page.waitForURL(`${server.url}/middlewares/broken-limit`);
  await page.goto(`${server.url}/middlewares/new`);
  // compress {} is a whole middleware (an empty headers middleware is refused since Traefik cannot decode it)
  await page.getByLabel('Type').selectOption('compress');
  await page.getByLabel('Name', { exact: true }).fill('broken LIMIT');
  await page.getByRole('button', { name: 'Create middleware' }).click();
  await page.locator('.error-box code.error-id', { hasText: 'already_exists' }).waitFor();
  await assertClean(t, problems, 'validation message');
});

uiTest(
  'middleware order on a resource: ↑ and drag-and-drop save new priorities, the provider follows',
  async (t, { server, page, problems }) => {
    const post = async (url: string, body: unknown) => {
      const response = await fetch(server.url + url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
    };
    await post('/api/middlewares', { id: 'first', name: 'First', type: 'compress', config: {} });
    await post('/api/middlewares', { id: 'second', name: 'Second', type: 'retry', config: { attempts: 2 } });
    await post('/api/resources/1-nextcloud-router/middlewares/bulk', {
      middlewares: [
        { middleware_id: 'first', priority: 100 },
        { middleware_id: 'second', priority: 200 },
      ],
    });
    const order = async () => {
      const resource = (await (await fetch(`${server.url}/api/resources/1-nextcloud-router`)).json()) as {
        middlewares: { id: string; priority: number }[];
        effective_middlewares: string[];
      };
      return resource;
    };
    await page.goto(`${server.url}/resources/1-nextcloud-router`);
    const rows = page.locator('#assigned-middlewares tbody tr[data-middleware]');
    await rows.first().waitFor();
    t.deepEqual(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-middleware'))), [
      'second',
      'first',
    ]);

    await page.getByRole('button', { name: 'Move first up' }).click();
    await waitFor(async () => (await rows.first().getAttribute('data-middleware')) === 'first', 10_000);
    const afterButton = await order();
    t.deepEqual(afterButton.middlewares, [
      { id: 'first', priority: 20 },
      { id: 'second', priority: 10 },
    ]);
    t.deepEqual(afterButton.effective_middlewares.slice(0, 2), ['first', 'second']);

    await page.locator('tr[data-middleware="second"]').dragTo(page.locator('tr[data-middleware="first"]'));
    await waitFor(async () => (await rows.first().getAttribute('data-middleware')) === 'second', 10_000);
    t.deepEqual(
      (await order()).middlewares.map((m) => m.id),
      ['second', 'first'],
    );
    const config = (await (await fetch(`${server.url}/api/proxy-config`)).json()) as {
      http: { routers: Record<string, { middlewares: string[] }> };
    };
    t.deepEqual(config.http.routers['1-Nextcloud-router'].middlewares.slice(0, 2), ['second', 'first']);
    await assertClean(t, problems, 'reorder');
  },
);
