/**
 * Auth in the browser (API.md §2.3, §4.18): in `ops` configuration screens work without a token and
 * operation screens ask for one; in `all` the UI asks first; a viewer token gets read-only screens.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { assertClean, uiTest } from './browser.ts';
import type { UiServer } from './server.ts';

async function adminToken(server: UiServer): Promise<string> {
  return (await readFile(path.join(server.dataDir, 'auth', 'initial-admin-token'), 'utf8')).trim();
}

async function createToken(server: UiServer, admin: string, name: string, role: string): Promise<string> {
  const response = await fetch(`${server.url}/api/auth/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, role }),
  });
  if (response.status !== 201) throw new Error(`token create: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { token: string }).token;
}

uiTest(
  'auth.mode ops: configuration screens open without a token, operation screens ask for one (kept for the tab)',
  async (t, { server, page, problems }) => {
    // without a token whoami answers 401: that is how the UI learns it must ask
    problems.allow.push((url, status) => url.endsWith('/api/auth/whoami') && status === 401);
    await page.goto(`${server.url}/middlewares`);
    await page.getByRole('link', { name: 'New middleware' }).waitFor();
    await page.getByRole('link', { name: /^Backups/ }).click();
    await page.getByRole('heading', { name: 'Token needed' }).waitFor();
    await page.getByLabel('API token').fill(await adminToken(server));
    await page.getByRole('button', { name: 'Use token' }).click();
    await page.getByRole('heading', { level: 1, name: 'Backups' }).waitFor();
    t.regex(await page.locator('.who').innerText(), /initial-admin · admin/);
    // the token lives in sessionStorage: a reload keeps it, the Logs and Tokens screens open
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Backups' }).waitFor();
    await page.getByRole('link', { name: /^Tokens/ }).click();
    await page.getByRole('heading', { level: 1, name: 'API tokens' }).waitFor();
    await page.locator('tr[data-token-name="initial-admin"]').waitFor();
    await assertClean(t, problems, 'ops mode');
  },
  { config: { auth: { mode: 'ops' } } },
);

uiTest(
  'auth.mode all: the UI asks for a token before any screen',
  async (t, { server, page, problems }) => {
    // the session probe (ui/src/lib/session.ts) without a token
    problems.allow.push((url, status) => new URL(url).pathname === '/api/datasource' && status === 401);
    await page.goto(`${server.url}/resources`);
    await page.getByRole('heading', { name: 'Token needed' }).waitFor();
    t.is(await page.locator('table').count(), 0, 'nothing is shown before the token');
    await page.getByLabel('API token').fill('smk_' + 'x'.repeat(43));
    problems.allow.push((url, status) => url.endsWith('/api/auth/whoami') && status === 401);
    await page.getByRole('button', { name: 'Use token' }).click();
    await page.getByText('The token was refused').waitFor();
    await page.getByLabel('API token').fill(await adminToken(server));
    await page.getByRole('button', { name: 'Use token' }).click();
    await page.locator('tr[data-resource]').first().waitFor();
    await assertClean(t, problems, 'all mode');
  },
  { config: { auth: { mode: 'all' } } },
);

uiTest(
  'a viewer token gets read-only screens',
  async (t, { server, page, problems }) => {
    const viewer = await createToken(server, await adminToken(server), 'watcher', 'viewer');
    // the session probe (ui/src/lib/session.ts) without a token
    problems.allow.push((url, status) => new URL(url).pathname === '/api/datasource' && status === 401);
    await page.goto(`${server.url}/middlewares`);
    await page.getByLabel('API token').fill(viewer);
    await page.getByRole('button', { name: 'Use token' }).click();
    await page.getByRole('heading', { level: 1, name: 'Middlewares' }).waitFor();
    t.regex(await page.locator('.who').innerText(), /watcher · viewer/);
    t.is(await page.getByRole('link', { name: 'New middleware' }).count(), 0, 'no create button');

    await page.goto(`${server.url}/resources`);
    await page.locator('tr[data-resource] a').first().click();
    await page.getByRole('tab', { name: 'Middlewares' }).waitFor();
    t.is(await page.locator('#assign-middleware').count(), 0, 'no assign form');
    await page.getByRole('tab', { name: 'Router options' }).click();
    await page.locator('#router-options').waitFor();
    t.is(await page.getByRole('button', { name: /^Save/ }).count(), 0, 'no save buttons');
    t.true(await page.locator('#router-options input').first().isDisabled(), 'inputs are disabled');

    await page.goto(`${server.url}/backups`);
    await page.getByRole('heading', { level: 1, name: 'Backups' }).waitFor();
    t.is(await page.locator('#backup-create').count(), 0, 'no backup form');
    await page.goto(`${server.url}/datasources`);
    await page.getByRole('heading', { level: 1, name: 'Data sources' }).waitFor();
    t.is(await page.getByRole('button', { name: 'Make active' }).count(), 0);
    await page.goto(`${server.url}/tokens`);
    await page.getByText('Tokens can only be managed with an admin token.').waitFor();
    await assertClean(t, problems, 'viewer');
  },
  { config: { auth: { mode: 'all' } } },
);
