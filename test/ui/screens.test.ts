/**
 * Every screen of the UI against the real server: loads with no console error, no failed request,
 * no error response and no request to another origin; screenshots in light and dark go to
 * test-artifacts/ui/ (not committed).
 */
import test from 'ava';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { ARTIFACTS, assertClean, chromiumMissing, clearProblems, openBrowser, SKIP_MESSAGE } from './browser.ts';
import { startUiServer } from './server.ts';

const SCREENS: [string, string, string][] = [
  // path, heading that proves the screen rendered, artefact name
  ['/', 'Dashboard', 'dashboard'],
  ['/resources', 'Resources', 'resources'],
  ['/resources/1-nextcloud-router', '1-Nextcloud-router', 'resource-detail'],
  ['/middlewares', 'Middlewares', 'middlewares'],
  ['/middlewares/new', 'New middleware', 'middleware-new'],
  ['/services', 'Services', 'services'],
  ['/services/new', 'New service', 'service-new'],
  ['/datasources', 'Data sources', 'datasources'],
  ['/plugins', 'Traefik plugins', 'plugins'],
  ['/explorer', 'Traefik explorer', 'explorer'],
  ['/mtls', 'mTLS', 'mtls'],
  ['/backups', 'Backups', 'backups'],
  ['/containers', 'Containers', 'containers'],
  ['/security', 'Security', 'security'],
  ['/logs', 'Logs', 'logs'],
  ['/tokens', 'API tokens', 'tokens'],
];

if (chromiumMissing) {
  test('UI screens', (t) => {
    t.log(SKIP_MESSAGE);
    t.pass();
  });
} else {
  test('every screen loads in light and dark with no console error, failed request or foreign origin', async (t) => {
    t.timeout(300_000);
    const server = await startUiServer(t, { docker: { host: '', socket: '/nonexistent/docker.sock' } });
    const browser = await openBrowser(t);
    await mkdir(ARTIFACTS, { recursive: true });
    for (const scheme of ['light', 'dark'] as const) {
      const { page, problems } = await browser.newPage({ colorScheme: scheme });
      // the containers and logs screens report Docker's absence as the server's 502 message: expected here
      problems.allow.push((url, status) => url.includes('/api/container/') && status === 502);
      problems.allow.push((url, status) => url.includes('/api/logs/proxy?') && status === 502);
      for (const [route, heading, name] of SCREENS) {
        clearProblems(problems);
        await page.goto(server.url + route);
        await page.getByRole('heading', { level: 1, name: heading, exact: true }).waitFor({ timeout: 120_000 });
        await page.waitForLoadState('networkidle');
        await page.screenshot({ path: path.join(ARTIFACTS, `${name}-${scheme}.png`), fullPage: true });
        if (name === 'dashboard' && scheme === 'light') {
          await page.setViewportSize({ width: 1100, height: 640 });
          await page.screenshot({ path: path.join(ARTIFACTS, 'readme-dashboard-light.png') });
          await page.setViewportSize({ width: 1280, height: 860 });
        }
        assertClean(t, problems, `${route} (${scheme})`);
        t.is(await page.locator('.error-box').count(), route === '/containers' || route === '/logs' ? 1 : 0, `unexpected error box on ${route}: ${await page.locator('.error-box').allInnerTexts()}`);
      }
    }
  });

  test('phone width: no sideways scrolling, the menu opens; the keyboard reaches the navigation', async (t) => {
    t.timeout(300_000);
    const server = await startUiServer(t);
    const browser = await openBrowser(t);
    const { page, problems } = await browser.newPage({ width: 390 });
    await mkdir(ARTIFACTS, { recursive: true });
    for (const route of ['/', '/resources', '/resources/1-nextcloud-router', '/middlewares/new']) {
      await page.goto(server.url + route);
      await page.locator('main h1').waitFor();
      await page.waitForLoadState('networkidle');
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      t.true(overflow <= 0, `${route} scrolls sideways by ${overflow}px at 390px`);
    }
    await page.goto(server.url + '/');
    await page.locator('main h1').waitFor();
    await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard-phone.png'), fullPage: true });
    t.false(await page.locator('#nav').isVisible(), 'navigation folded away');
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.locator('#nav').getByRole('link', { name: 'Middlewares' }).click();
    await page.getByRole('heading', { level: 1, name: 'Middlewares' }).waitFor();

    // keyboard only: Tab to the first navigation link after the skip link, Enter follows it
    const desktop = await browser.newPage();
    await desktop.page.goto(server.url + '/');
    await desktop.page.locator('main h1').waitFor();
    let focused = '';
    for (let i = 0; i < 12 && focused !== 'Resources'; i++) {
      await desktop.page.keyboard.press('Tab');
      focused = await desktop.page.evaluate(() => (document.activeElement as HTMLElement | null)?.innerText?.trim() ?? '');
    }
    t.is(focused, 'Resources', 'Tab reaches the navigation');
    await desktop.page.keyboard.press('Enter');
    await desktop.page.getByRole('heading', { level: 1, name: 'Resources' }).waitFor();
    assertClean(t, problems, 'phone');
    assertClean(t, desktop.problems, 'keyboard');
  });
}
