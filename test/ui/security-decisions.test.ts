/**
 * The security screen's decisions table and allowlist (API.md §4.23) against a private real
 * CrowdSec LAPI, with a bouncer middleware in stream mode (15 s): filter, add a ban, delete it,
 * allowlist the seeded address (its decision goes), remove the entry — each action says when
 * Traefik feels it, and the LAPI confirms each change.
 */
import anyTest, { type TestFn } from 'ava';
import { assertClean, chromiumMissing, SKIP_MESSAGE, uiTest } from './browser.ts';
import { crowdsecConfig, cscli, hasCommands, startLapi, type Lapi } from '../helpers/crowdsec-lapi.ts';

const test = anyTest as TestFn<{ lapi?: Lapi }>;
const skip = chromiumMissing
  ? SKIP_MESSAGE
  : hasCommands('crowdsec', 'cscli')
    ? null
    : 'crowdsec/cscli not installed (apt-get install crowdsec)';

if (!skip) {
  test.before(async (t) => {
    t.context.lapi = await startLapi();
    await cscli(t.context.lapi, 'decisions', 'add', '--ip', '192.0.2.88', '--duration', '1h', '--reason', 'ui-seed');
    await cscli(t.context.lapi, 'decisions', 'add', '--ip', '192.0.2.87', '--duration', '1h', '--reason', 'ui-other');
  });
  test.after.always(async (t) => {
    await t.context.lapi?.stop();
  });
}

/** The values of active decisions as the LAPI lists them (cscli, raw CSV). */
const lapiValues = async (lapi: Lapi) => await cscli(lapi, 'decisions', 'list', '-o', 'raw');

uiTest(
  'security: decisions filter/add/delete and allowlist add/remove, each with the time Traefik needs',
  async (t, { server, page, problems }) => {
    const lapi = t.context.lapi!;
    // the bad ban below answers 422 on purpose
    problems.allow.push((url, status) => url.endsWith('/api/ip/decisions') && status === 422);
    const bouncer = await fetch(`${server.url}/api/middlewares`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        id: 'crowdsec-bouncer',
        name: 'CrowdSec bouncer',
        type: 'plugin',
        config: {
          crowdsec: { enabled: true, crowdsecMode: 'stream', crowdsecLapiKey: 'k', updateIntervalSeconds: 15 },
        },
      }),
    });
    t.is(bouncer.status, 201);

    await page.goto(`${server.url}/security`);
    const decisions = page.locator('#decisions-table');
    await decisions.locator('tr[data-decision="192.0.2.88"]').waitFor();
    await decisions.locator('tr[data-decision="192.0.2.87"]').waitFor();

    // filter
    await page.getByLabel('Filter by value').fill('192.0.2.88');
    await page.getByRole('button', { name: 'Filter' }).click();
    await decisions.locator('tr[data-decision="192.0.2.87"]').waitFor({ state: 'detached' });
    t.is(await decisions.locator('tr[data-decision]').count(), 1);
    await page.getByLabel('Filter by value').fill('');
    await page.getByRole('button', { name: 'Filter' }).click();
    await decisions.locator('tr[data-decision="192.0.2.87"]').waitFor();

    // add a ban
    await page.getByLabel('Ban value').fill('192.0.2.89');
    await page.getByLabel('Duration').fill('2h');
    await page.getByLabel('Reason').fill('ui ban');
    await page.getByRole('button', { name: 'Add decision' }).click();
    await page.locator('#security-notice', { hasText: 'Traefik starts blocking within 15 s' }).waitFor();
    const added = decisions.locator('tr[data-decision="192.0.2.89"]');
    await added.waitFor();
    t.regex(await added.innerText(), /ban[\s\S]*ui ban/);
    t.regex(await lapiValues(lapi), /192\.0\.2\.89/);

    // bad input: the field says why, nothing reaches the LAPI
    await page.getByLabel('Ban value').fill('192.0.2.9/24');
    await page.getByRole('button', { name: 'Add decision' }).click();
    await page
      .getByText(/host bits set: the range is 192\.0\.2\.0\/24/)
      .first()
      .waitFor();
    t.notRegex(await lapiValues(lapi), /192\.0\.2\.9\/24|192\.0\.2\.0\/24/);

    // delete it
    await added.getByRole('button', { name: 'Delete' }).click();
    await page
      .locator('#security-notice', {
        hasText: /Deleted decision \d+ on 192\.0\.2\.89\. Traefik stops blocking within 15 s/,
      })
      .waitFor();
    await added.waitFor({ state: 'detached' });
    t.notRegex(await lapiValues(lapi), /192\.0\.2\.89/);

    // allowlist the seeded address: its decision goes at once
    await page.getByLabel('Allow value').fill('192.0.2.88');
    await page.getByLabel('TTL').fill('2h');
    await page.getByLabel('Why').fill('roaming phone');
    await page.getByRole('button', { name: 'Allowlist', exact: true }).click();
    await page
      .locator('#security-notice', {
        hasText: /Allowlisted 192\.0\.2\.88 until .*; removed 1 decision\(s\)\. Traefik stops blocking within 15 s/,
      })
      .waitFor();
    const entry = page.locator('#allowlist-table tr[data-entry="192.0.2.88"]');
    await entry.waitFor();
    t.regex(await entry.innerText(), /roaming phone/);
    t.notRegex(await lapiValues(lapi), /192\.0\.2\.88/);
    await decisions.locator('tr[data-decision="192.0.2.88"]').waitFor({ state: 'detached' });

    // remove the entry
    await entry.getByRole('button', { name: 'Remove' }).click();
    await entry.waitFor({ state: 'detached' });
    await page.locator('#security-notice', { hasText: 'Removed the allowlist entry for 192.0.2.88' }).waitFor();
    await assertClean(t, problems, 'security decisions');
  },
  { test, skip, config: (t) => crowdsecConfig(t.context.lapi!), serial: true },
);
