/**
 * The Notifications screen: add a webhook channel with a secret, send a test message that reaches a
 * real receiver, never show the secret, disable it, and see a raised notification in the history.
 */
import { assertClean, uiTest } from './browser.ts';
import { startReceiver } from '../notifications/support.ts';
import { waitFor } from '../helpers/wait.ts';

uiTest('add a channel, test it, see the history; the secret never appears', async (t, { server, page, problems }) => {
  const receiver = await startReceiver(t);
  const secret = 'ui-hmac-secret-123456';
  await page.goto(`${server.url}/notifications`);
  await page.getByRole('heading', { level: 1, name: 'Notifications' }).waitFor();
  await page.getByLabel('Name').fill('Ops hook');
  await page.getByLabel('Minimum severity').selectOption('info');
  await page.getByLabel('URL').fill(`${receiver.url}/hook`);
  await page.getByLabel('HMAC secret (optional)').fill(secret);
  await page.locator('input[name="category_config"]').uncheck();
  await page.locator('input[name="quiet_start"]').fill('22:00');
  await page.locator('input[name="quiet_end"]').fill('07:00');
  await page.getByRole('button', { name: 'Add channel' }).click();
  const row = page.locator('#channel-list tr[data-channel="ops-hook"]');
  await row.waitFor();
  t.regex(await row.innerText(), /Ops hook\s+webhook\s+enabled\s+info\s+immediate/);
  t.regex(await row.innerText(), /proxy, certs, security, containers, backups, system/);
  const stored = (await server.app.inject({ url: '/api/notifications/channels/ops-hook' })).json();
  t.like(stored.quiet_hours, { start: '22:00', end: '07:00' });
  t.false(stored.categories.includes('config'));

  await row.getByRole('button', { name: 'Test' }).click();
  const result = page.locator('#test-result');
  await result.waitFor();
  t.regex(await result.innerText(), /^Test message delivered through Ops hook in \d+ ms\.$/);
  t.is(receiver.received.length, 1);
  t.is(receiver.received[0].url, '/hook');
  t.regex(String(receiver.received[0].headers['x-stack-manager-signature']), /^sha256=[0-9a-f]{64}$/);

  server.app.notifications.notify({
    category: 'containers',
    severity: 'error',
    title: 'traefik exited',
    body: 'exit 1',
  });
  await waitFor(() => receiver.received.length === 2, 500);
  await page.getByRole('button', { name: 'Refresh history' }).click();
  const entry = page.locator('#notification-history tr[data-status="sent"]', { hasText: 'traefik exited' });
  await entry.waitFor();
  t.regex(await entry.innerText(), /ops-hook\s+containers\s+error\s+traefik exited\s+sent\s+1/);

  await row.getByRole('button', { name: 'Disable' }).click();
  await page.locator('#channel-list tr[data-channel="ops-hook"]', { hasText: 'disabled' }).waitFor();
  t.false((await page.content()).includes(secret));
  await assertClean(t, problems, 'notifications');
});
