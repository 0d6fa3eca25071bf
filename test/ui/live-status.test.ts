/**
 * What Traefik really runs, in the UI (issue 26 item 4, API.md §4.19): a Traefik instance (the fake
 * Traefik API on 127.0.0.1 running the document we serve, with one router refused the way Traefik
 * 3.7 refuses it) is checked every second; the resources list shows the refused resource `disabled`
 * with Traefik's error and filters on the state, the resource's "Live in Traefik" tab shows the
 * instance, the dashboard's Diagnosis lists the finding with its fix; once Traefik runs the router,
 * all three open pages update through GET /api/events, without a reload.
 */
import type { Page } from 'playwright-core';
import path from 'node:path';
import { mkdir } from 'node:fs/promises';
import { ARTIFACTS, assertClean, uiTest } from './browser.ts';
import { waitFor } from '../helpers/wait.ts';
import { startFakeTraefikApi, type FakeTraefikApi } from '../helpers/fake-traefik-api.ts';

/** Traefik's error for a router whose middleware does not exist (measured on Traefik 3.7.15). */
const REFUSAL = 'middleware "nope@file" does not exist';

interface ResourceView {
  id: string;
  router: string;
  live?: { state: string; checked_at: string | null; instances: { source: string; state: string; errors: string[] }[] };
}
interface DiagnosisView {
  instances: { source: string; document: string }[];
  findings: { id: string; message: string; fix: string; resources: string[] }[];
}

async function getJson<T>(url: string, init?: RequestInit): Promise<T> {
  const response = await fetch(url, init);
  if (!response.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: ${response.status} ${await response.text()}`);
  return (response.status === 204 ? null : await response.json()) as T;
}

/** Marks the page so that a reload (which would drop the mark) is seen. */
async function mark(page: Page): Promise<void> {
  await page.evaluate(() => ((window as unknown as { __noReload: boolean }).__noReload = true));
}
async function notReloaded(page: Page): Promise<boolean> {
  return page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload === true);
}

let fake: FakeTraefikApi;

uiTest(
  'a router Traefik refuses shows on the resources list, the resource and the dashboard, and clears live when fixed',
  async (t, { server, browser, page, problems }) => {
    // the fake Traefik runs the document we serve, but refuses one router the way Traefik 3.7 does;
    // our `traefik` data source points at it
    const served = await getJson<any>(`${server.url}/api/proxy-config`);
    // the instance has the entry points of the fixture's TCP/UDP routers (tcp-2222, udp-19132 …)
    const used = new Set<string>();
    for (const protocol of ['http', 'tcp', 'udp'])
      for (const router of Object.values<any>(served[protocol]?.routers ?? {}))
        for (const name of router.entryPoints ?? []) used.add(name);
    for (const name of used)
      if (!fake.lists.entrypoints.some((e) => e.name === name)) fake.lists.entrypoints.push({ name, address: ':0' });
    fake.load(served);
    const resources = await getJson<ResourceView[]>(`${server.url}/api/resources?status=active`);
    const target = resources.find((resource) => resource.router === '2-Grafana-router@http');
    t.truthy(target, 'the fixture resource behind 2-Grafana-router');
    const id = target!.id;
    Object.assign(fake.router('2-Grafana-router@http'), { status: 'disabled', error: [REFUSAL] });
    await getJson(`${server.url}/api/datasource/traefik`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: fake.url }),
    });
    const refused = await waitFor(async () => {
      const resource = await getJson<ResourceView>(`${server.url}/api/resources/${id}`);
      return resource.live?.state === 'disabled' ? resource : null;
    }, 3000);
    t.deepEqual(
      refused.live!.instances.map((instance) => [instance.source, instance.state, instance.errors]),
      [['traefik', 'disabled', [REFUSAL]]],
    );
    // every other resource runs as served
    const others = await getJson<ResourceView[]>(`${server.url}/api/resources?status=active`);
    t.deepEqual(
      others.filter((resource) => resource.id !== id && resource.live?.state !== 'live').map((r) => [r.id, r.live]),
      [],
    );

    // resources list: the Traefik column, with Traefik's error in the badge's tooltip
    await page.goto(`${server.url}/resources`);
    const badge = page.locator(`tr[data-resource="${id}"] [data-live-state]`);
    await badge.waitFor();
    t.is(await badge.getAttribute('data-live-state'), 'disabled');
    t.is((await badge.innerText()).trim(), 'disabled');
    const tooltip = (await badge.getAttribute('title')) ?? '';
    t.true(tooltip.includes(`traefik: disabled — ${REFUSAL}`), tooltip);
    t.true((await page.locator('tr[data-resource]').count()) > 1, 'the unfiltered list holds every resource');
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'live-resources.png'), fullPage: true });

    // the filter asks the server for ?live=disabled and shows only that resource
    const filtered = page.waitForRequest((request) => new URL(request.url()).searchParams.get('live') === 'disabled');
    await page.getByLabel('In Traefik').selectOption('disabled');
    await filtered;
    await waitFor(async () => (await page.locator('tr[data-resource]').count()) === 1, 2000, 50);
    t.deepEqual(
      await page
        .locator('tr[data-resource]')
        .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-resource'))),
      [id],
    );
    await page.getByLabel('In Traefik').selectOption('live');
    await page.locator(`tr[data-resource="${id}"]`).waitFor({ state: 'detached' });
    const live = await getJson<ResourceView[]>(`${server.url}/api/resources?live=live`);
    t.true(live.length > 0);
    await waitFor(async () => (await page.locator('tr[data-resource]').count()) === live.length, 2000, 50);
    await page.getByLabel('In Traefik').selectOption('');
    await page.locator(`tr[data-resource="${id}"]`).waitFor();

    // the resource: "Live in Traefik" lists the instance with its version and Traefik's error verbatim
    const detail = await browser.newPage();
    await detail.page.goto(`${server.url}/resources/${id}`);
    await detail.page.getByRole('tab', { name: 'Live in Traefik' }).click();
    const instance = detail.page.locator('#live-in-traefik tr[data-instance="traefik"]');
    await instance.waitFor();
    t.is(await instance.getAttribute('data-state'), 'disabled');
    t.is(await instance.locator('.traefik-error').innerText(), REFUSAL);
    t.regex(await instance.innerText(), /3\.7\.15/);
    await detail.page.screenshot({ path: path.join(ARTIFACTS, 'live-resource-tab.png'), fullPage: true });
    t.not(await detail.page.locator('#live-in-traefik [data-checked-at]').getAttribute('data-checked-at'), '');

    // the dashboard: the instance runs our document; the finding about the resource, with its fix
    const dashboard = await browser.newPage();
    await dashboard.page.goto(`${server.url}/`);
    const diagnosis = await getJson<DiagnosisView>(`${server.url}/api/proxy-config/diagnosis`);
    t.log(`findings: ${JSON.stringify(diagnosis.findings)}`);
    const finding = diagnosis.findings.find((f) => f.resources.includes(id));
    t.truthy(finding, 'a finding names the refused resource');
    const item = dashboard.page.locator(`#diagnosis [data-finding="${finding!.id}"]`);
    await item.waitFor();
    t.is(await item.locator('.finding-message').innerText(), finding!.message);
    t.is((await item.locator('.finding-fix').innerText()).replace(/^Fix:\s*/, ''), finding!.fix);
    t.is(await item.locator(`a[data-finding-resource="${id}"]`).getAttribute('href'), `/resources/${id}`);
    const row = dashboard.page.locator('#diagnosis-instances tr[data-instance="traefik"]');
    await row.waitFor();
    t.is(await row.getAttribute('data-document'), diagnosis.instances[0].document);
    t.regex(await row.innerText(), /3\.7\.15/);
    await dashboard.page.screenshot({ path: path.join(ARTIFACTS, 'live-diagnosis.png'), fullPage: true });

    // Traefik runs the router again: the three open pages follow the events, without a reload
    for (const open of [page, detail.page, dashboard.page]) await mark(open);
    const fixed = fake.router('2-Grafana-router@http');
    fixed.status = 'enabled';
    delete fixed.error;
    const fixedAt = Date.now();
    const seen = (wait: Promise<void>) => wait.then(() => Date.now() - fixedAt);
    const delays = await Promise.all([
      seen(page.locator(`tr[data-resource="${id}"] [data-live-state="live"]`).waitFor()),
      seen(detail.page.locator('#live-in-traefik tr[data-instance="traefik"][data-state="live"]').waitFor()),
      seen(item.waitFor({ state: 'detached' })),
    ]);
    // the next check runs within live.interval_s (1 s); the pages reload 100 ms after its events
    t.log(`Traefik fixed → shown: list ${delays[0]} ms, resource ${delays[1]} ms, dashboard ${delays[2]} ms`);
    t.is(await detail.page.locator('#live-in-traefik .traefik-error').count(), 0);
    const after = await getJson<DiagnosisView>(`${server.url}/api/proxy-config/diagnosis`);
    t.deepEqual(after.findings, [], 'no finding once Traefik runs every router');
    await dashboard.page
      .locator('[data-diagnosis-empty="no-findings"]', { hasText: 'Traefik runs what we serve' })
      .waitFor();
    for (const open of [page, detail.page, dashboard.page]) t.true(await notReloaded(open), 'updated without a reload');

    // without a traefik data source there is nothing to check: the dashboard says how to add one
    // (the dashboard's Traefik API check and deep health answer 503 then: expected)
    dashboard.problems.allow.push(
      (url, status) => status === 503 && /\/api\/(proxy\/version|health)/.test(new URL(url).pathname),
    );
    await getJson(`${server.url}/api/datasource/traefik`, { method: 'DELETE' });
    await waitFor(
      async () => (await getJson<DiagnosisView>(`${server.url}/api/proxy-config/diagnosis`)).instances.length === 0,
      1000,
    );
    await dashboard.page.reload();
    const empty = dashboard.page.locator('[data-diagnosis-empty="no-instances"]');
    await empty.waitFor();
    t.regex(await empty.innerText(), /data source of type traefik is checked.*add one with the URL of Traefik's API/s);

    await assertClean(t, problems, 'resources list');
    await assertClean(t, detail.problems, 'resource detail');
    await assertClean(t, dashboard.problems, 'dashboard');
  },
  {
    config: async (t) => {
      fake = await startFakeTraefikApi();
      t.teardown(() => fake.close());
      // check right after each generation and every second (API.md §4.19)
      return { live: { settle_s: 0, interval_s: 1 } };
    },
  },
);
