/**
 * The dashboard's provider card and the upstream's last error (issue 24): while the data source
 * fails the error shows as current; after a later successful sync it shows as past, with its time,
 * and never again in red next to the newer success.
 */
import { assertClean, uiTest } from './browser.ts';

uiTest(
  'the provider card shows an upstream error as current while it fails and as past after a later success',
  async (t, { server, page, problems }) => {
    const { app, fake } = server;
    // the deep health check fails with the upstream: its 503 is expected until the source recovers
    problems.allow.push((url, status) => new URL(url).pathname === '/api/health' && status === 503);

    fake.state.fault = '502';
    fake.state.faultPath = '/api/v1/';
    const failed = await app.resources.syncNow();
    t.false(failed.ok, 'the sync against the failing Pangolin failed');

    await page.goto(`${server.url}/`);
    const card = page.locator('#provider-status');
    const current = card.locator('[data-upstream-error="current"]');
    await current.waitFor();
    t.regex(await current.innerText(), /injected fault 502/);
    const failing = (await app.inject({ method: 'GET', url: '/api/proxy-config/status' })).json();
    t.true(failing.upstream.last_error_at !== null && failing.stale);

    // the source recovers: the open page hears the `upstream` event and reloads the status
    fake.state.fault = null;
    const recovered = await app.resources.syncNow();
    t.true(recovered.ok, `the sync after the fault cleared succeeded: ${recovered.error}`);
    const past = card.locator('[data-upstream-error="past"]');
    await past.waitFor();
    await current.waitFor({ state: 'detached' });
    t.is(await card.locator('.field-error').count(), 0, 'nothing in red on the card after the success');

    const status = (await app.inject({ method: 'GET', url: '/api/proxy-config/status' })).json();
    t.false(status.stale);
    t.true(Date.parse(status.upstream.last_ok_at) > Date.parse(status.upstream.last_error_at));
    // the past error names its message and its time, as the browser formats it
    const shownTime = await page.evaluate(
      (iso: string) => new Date(iso).toLocaleString(),
      status.upstream.last_error_at as string,
    );
    const text = await past.innerText();
    t.true(text.includes('injected fault 502'), text);
    t.true(text.includes(shownTime), `${text} names ${shownTime}`);
    t.log(`provider card after recovery: ${text}`);
    await assertClean(t, problems, 'dashboard after an upstream failure and recovery');
  },
);
