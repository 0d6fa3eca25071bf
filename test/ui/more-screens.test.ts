/**
 * The remaining screens' main actions through the browser: mTLS (CA, client, .p12 download,
 * revoke), data sources (test with latency, switch active), tokens (created token shown once, revoke).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { assertClean, uiTest } from './browser.ts';

uiTest('mTLS: create a CA and a client, download its .p12, revoke it', async (t, { server, page, problems }) => {
  await page.goto(`${server.url}/mtls`);
  // the test's Traefik static config has no plugins: the screen says the mtlswhitelist plugin is missing and where to add it
  const plugin = page.locator('#mtls-plugin[data-installed="false"]');
  await plugin.waitFor();
  t.regex(
    await plugin.innerText(),
    /mtlswhitelist: missing not in \S*traefik\.yml; install it on the Traefik plugins screen/,
  );
  await page.getByLabel('Common name').fill('UI test CA');
  await page.getByLabel('Key size').selectOption('2048');
  await page.getByRole('button', { name: 'Create CA' }).click();
  await page.locator('#mtls-ca', { hasText: 'UI test CA' }).locator('dl').waitFor({ timeout: 60_000 });
  await page.getByLabel('Name', { exact: true }).fill('Laptop');
  await page.getByLabel('PKCS#12 password (8+ chars, never stored)').fill('correct horse');
  await page.getByRole('button', { name: 'Create client' }).click();
  const row = page.locator('tr[data-client="laptop"]');
  await row.waitFor({ timeout: 60_000 });
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    row.getByRole('button', { name: 'Download .p12' }).click(),
  ]);
  t.is(download.suggestedFilename(), 'laptop.p12');
  const p12 = await readFile((await download.path())!);
  t.is(p12[0], 0x30, 'a DER SEQUENCE (PKCS#12)');
  t.true(p12.length > 1000);
  page.once('dialog', (dialog) => void dialog.accept());
  await row.getByRole('button', { name: 'Revoke' }).click();
  await row.locator('.badge', { hasText: /^revoked$/ }).waitFor();
  t.is(await row.getByRole('button', { name: 'Download .p12' }).count(), 0, 'a revoked client has no download');
  await assertClean(t, problems, 'mTLS');
});

uiTest(
  'data sources: a test shows the latency, another source becomes active',
  async (t, { server, page, problems }) => {
    await page.goto(`${server.url}/datasources`);
    const traefik = page.locator('form[data-source="traefik"]');
    await traefik.getByRole('button', { name: 'Test' }).click();
    const result = traefik.locator('[data-test-result="ok"]');
    await result.waitFor();
    t.regex(await result.innerText(), /Reachable in \d+ ms, \d+ routers, Traefik 3\./);
    // a wrong URL, tested before saving: the failure and the server's reason are shown
    await traefik.getByLabel('URL').fill('http://127.0.0.1:9');
    await traefik.getByRole('button', { name: 'Test' }).click();
    await traefik.locator('[data-test-result="fail"]').waitFor();
    await page.getByRole('button', { name: 'Make active' }).click();
    await page.locator('h2', { hasText: 'traefik' }).getByText('active').waitFor();
    const active = (await (await fetch(`${server.url}/api/datasource/active`)).json()) as { name: string };
    t.is(active.name, 'traefik');
    await assertClean(t, problems, 'data sources');
  },
);

uiTest(
  'tokens: a new token is shown once and can be revoked',
  async (t, { server, page, problems }) => {
    const admin = (await readFile(path.join(server.dataDir, 'auth', 'initial-admin-token'), 'utf8')).trim();
    problems.allow.push((url, status) => url.endsWith('/api/auth/whoami') && status === 401);
    await page.goto(`${server.url}/tokens`);
    await page.getByLabel('API token').fill(admin);
    await page.getByRole('button', { name: 'Use token' }).click();
    await page.getByLabel('Name').fill('ci-reader');
    await page.getByLabel('Role').selectOption('viewer');
    await page.getByRole('button', { name: 'Create token' }).click();
    const shown = page.locator('#created-token [data-token]');
    await shown.waitFor();
    const token = (await shown.innerText()).trim();
    t.regex(token, /^smk_[A-Za-z0-9_-]{43}$/);
    const whoami = await fetch(`${server.url}/api/auth/whoami`, { headers: { authorization: `Bearer ${token}` } });
    t.is(((await whoami.json()) as { role: string }).role, 'viewer');
    await page.getByRole('button', { name: 'Done' }).click();
    t.is(await page.locator('#created-token').count(), 0, 'shown only once');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.locator('tr[data-token-name="ci-reader"]').getByRole('button', { name: 'Revoke' }).click();
    await page.locator('tr[data-token-name="ci-reader"]').waitFor({ state: 'detached' });
    t.is((await fetch(`${server.url}/api/auth/whoami`, { headers: { authorization: `Bearer ${token}` } })).status, 401);
    await assertClean(t, problems, 'tokens');
  },
  { config: { auth: { mode: 'ops' } } },
);

uiTest(
  "explorer: Traefik's overview counts per protocol (with its errors) and its entry points head the lists",
  async (t, { server, page, problems }) => {
    await page.goto(`${server.url}/explorer`);
    const overview = page.locator('[data-overview="http"]');
    await overview.waitFor();
    // the fake Traefik serves the shared fixture: 15 HTTP routers, one of them in error
    t.is(await overview.innerText(), 'HTTP: 15 routers (1 with errors) · 11 services · 11 middlewares');
    await page.getByLabel('Protocol').selectOption('tcp');
    t.regex(
      await page.locator('[data-overview="tcp"]').innerText(),
      /^TCP: 2 routers \(1 with errors\) · 2 services · 2 middlewares$/,
    );
    t.is(await page.locator('[data-entry-point="websecure"]').innerText(), 'websecure :443');
    t.is(await page.locator('[data-entry-point]').count(), 5);
    await assertClean(t, problems, 'explorer');
  },
);
