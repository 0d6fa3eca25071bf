/**
 * The dashboard's Diagnosis before the first live check (API.md §4.19: `checked_at` null, every
 * instance `reachable: false`, no findings): it said "Reachable: no" next to the green "Traefik runs
 * what we serve: no findings" while nothing had been read. It now says "not checked yet" instead.
 */
import { assertClean, uiTest } from './browser.ts';

uiTest(
  'Diagnosis before the first check: "not checked yet", neither unreachable nor "no findings"',
  async (t, { server, page, problems }) => {
    const diagnosis = (await (await fetch(`${server.url}/api/proxy-config/diagnosis`)).json()) as {
      checked_at: string | null;
      instances: { source: string; reachable: boolean }[];
    };
    t.is(diagnosis.checked_at, null);
    t.is(diagnosis.instances.length, 1);
    await page.goto(`${server.url}/`);
    const row = page.locator('#diagnosis tr[data-instance="traefik"]');
    await row.waitFor();
    t.regex(await row.innerText(), /not checked yet/);
    t.is(await row.getByText('no', { exact: true }).count(), 0);
    await page.locator('[data-diagnosis-empty="not-checked"]').waitFor();
    t.is(await page.locator('[data-diagnosis-empty="no-findings"]').count(), 0);
    await assertClean(t, problems, 'dashboard');
  },
  // no check runs during the test: the longest settle time after a new document, a day between checks
  { config: { live: { settle_s: 3600, interval_s: 86400 } } },
);
