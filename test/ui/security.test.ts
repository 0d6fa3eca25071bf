/**
 * The security screen against a private real CrowdSec LAPI: an IP check shows the decision and its
 * alert, Unban deletes it, and the re-check shows the IP free.
 */
import anyTest, { type TestFn } from 'ava';
import { assertClean, chromiumMissing, SKIP_MESSAGE, uiTest } from './browser.ts';
import { crowdsecConfig, cscli, hasCommands, startLapi, type Lapi } from '../helpers/crowdsec-lapi.ts';

const test = anyTest as TestFn<{ lapi?: Lapi }>;
// a file-wide reason keeps the before hook from starting CrowdSec for tests that cannot run
const skip = chromiumMissing
  ? SKIP_MESSAGE
  : hasCommands('crowdsec', 'cscli')
    ? null
    : 'crowdsec/cscli not installed (apt-get install crowdsec)';

if (!skip) {
  test.before(async (t) => {
    t.context.lapi = await startLapi();
    await cscli(
      t.context.lapi,
      'decisions',
      'add',
      '--ip',
      '192.0.2.77',
      '--duration',
      '1h',
      '--reason',
      'ui-test-ban',
    );
  });
  test.after.always(async (t) => {
    await t.context.lapi?.stop();
  });
}

uiTest(
  'security: an IP check shows the ban, Unban lifts it',
  async (t, { server, page, problems }) => {
    await page.goto(`${server.url}/security`);
    await page.getByLabel('IP address').fill('192.0.2.77');
    await page.getByRole('button', { name: 'Check' }).click();
    const report = page.locator('#ip-report');
    await report.locator('.badge', { hasText: /^blocked$/ }).waitFor();
    t.regex(await report.innerText(), /ban .*192\.0\.2\.77/i);
    await report.getByRole('button', { name: 'Unban' }).click();
    await report.locator('.badge', { hasText: /^not blocked$/ }).waitFor();
    await page.getByText(/Deleted 1 decision/).waitFor();
    t.notRegex(await cscli(t.context.lapi!, 'decisions', 'list', '-o', 'raw'), /192\.0\.2\.77/);
    await assertClean(t, problems, 'security');
  },
  { test, skip, config: (t) => crowdsecConfig(t.context.lapi!) },
);
