/**
 * Vendoring in the UI (API.md §4.20, issue 27): a Traefik instance (the fake Traefik API) that
 * disabled its plugins the way Traefik 3.7 does when a download fails (only the local badger@http
 * named) gives the dashboard a plugins_disabled finding whose link opens the plugins screen on the
 * remote plugin to vendor; "Vendor (work offline)" downloads it from the loopback registry and shows
 * version, sha256 and "restart Traefik required"; "Un-vendor" moves it back; "Upload zip" vendors
 * an uploaded archive. Once Traefik runs the plugins again the finding goes.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import { tempDir } from '../helpers/build.ts';
import { startFakeTraefikApi, type FakeTraefikApi } from '../helpers/fake-traefik-api.ts';
import { startPluginRegistry, type PluginRegistry } from '../helpers/plugin-registry.ts';
import { waitFor } from '../helpers/wait.ts';
import { zipSource } from '../helpers/zip.ts';
import { ARTIFACTS, assertClean, uiTest } from './browser.ts';

const MODULE = 'github.com/stack-manager-e2e/plugin-stamp';
const VERSION = 'v0.1.0';
const STAMP_SOURCE = path.resolve(import.meta.dirname, '..', 'fixtures', 'traefik-plugins', 'stamp');
/** Traefik 3.7.15's words for a plugin middleware once plugins are disabled (measured in e2e/vendor-offline). */
const DISABLED = 'invalid middleware "badger@http" configuration: invalid middleware type or middleware does not exist';

let fake: FakeTraefikApi;
let registry: PluginRegistry;
let staticFile: string;
let localDir: string;

async function getJson<T>(url: string, init?: RequestInit): Promise<T> {
  const response = await fetch(url, init);
  if (!response.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

interface Finding {
  id: string;
  kind: string;
  fix: string;
}

/** Traefik's lists after a start whose plugin download failed: badger@http and its routers disabled. */
function pluginsDisabled(disabled: boolean): void {
  const middleware = fake.lists.http.middlewares.find((m) => m.name === 'badger@http');
  if (!middleware) throw new Error('the fixture document has no badger middleware');
  const routers = fake.lists.http.routers.filter((r) => (r.middlewares ?? []).includes('badger@http'));
  for (const item of [middleware, ...routers]) {
    if (disabled) Object.assign(item, { status: 'disabled', error: [DISABLED] });
    else {
      item.status = 'enabled';
      delete item.error;
    }
  }
  middleware.usedBy = routers.map((r) => r.name);
}

uiTest(
  'plugins: the plugins_disabled finding links to the plugin to vendor; Vendor (work offline), Un-vendor and Upload zip show version, sha256 and the restart',
  async (t, { server, browser, page, problems }) => {
    const served = await getJson<Record<string, any>>(`${server.url}/api/proxy-config`);
    for (const protocol of ['http', 'tcp', 'udp'])
      for (const router of Object.values<any>(served[protocol]?.routers ?? {}))
        for (const name of router.entryPoints ?? [])
          if (!fake.lists.entrypoints.some((e) => e.name === name))
            fake.lists.entrypoints.push({ name, address: ':0' });
    fake.load(served);
    pluginsDisabled(true);
    await getJson(`${server.url}/api/datasource/traefik`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: fake.url }),
    });
    const finding = await waitFor(async () => {
      const { findings } = await getJson<{ findings: Finding[] }>(`${server.url}/api/proxy-config/diagnosis`);
      return findings.find((f) => f.kind === 'plugins_disabled');
    }, 3000);
    t.true(finding.fix.includes('POST /api/plugins/stamp/vendor'), finding.fix);

    // the dashboard's finding links to the plugins screen, on stamp (the remote one), not badger
    const dashboard = await browser.newPage();
    await dashboard.page.goto(`${server.url}/`);
    const item = dashboard.page.locator(`#diagnosis [data-finding="${finding.id}"]`);
    await item.waitFor();
    t.is(await item.locator('a[data-finding-vendor]').count(), 1);
    await mkdir(ARTIFACTS, { recursive: true });
    await dashboard.page.screenshot({ path: path.join(ARTIFACTS, 'plugins-vendor-finding.png'), fullPage: true });
    await page.goto(`${server.url}/`);
    await page.locator(`#diagnosis [data-finding="${finding.id}"] a[data-finding-vendor="stamp"]`).click();
    await page.waitForURL(/\/plugins\?vendor=stamp$/);
    const row = page.locator('tr[data-plugin="stamp"]');
    await row.and(page.locator('[data-focused]')).waitFor();
    await page.locator('[data-vendor-focus="stamp"]').waitFor();
    t.is(
      await page.locator('tr[data-plugin="badger"]').getByRole('button', { name: 'Vendor (work offline)' }).count(),
      0,
      'badger is local already',
    );

    // Vendor (work offline): the server downloads it from the registry
    await row.getByRole('button', { name: 'Vendor (work offline)' }).click();
    const notice = page.getByRole('status');
    await notice.getByText(/Vendored stamp v0\.1\.0 \(sha256 [0-9a-f]{64}\).*Restart Traefik required/).waitFor();
    t.deepEqual(registry.requests, [`/public/download/${MODULE}/${VERSION}`]);
    const vendored = row.locator(`[data-vendored="stamp"]`);
    await vendored.waitFor();
    const listed = await getJson<Array<{ key: string; vendored: { sha256: string } | null }>>(
      `${server.url}/api/plugins`,
    );
    const sha256 = listed.find((p) => p.key === 'stamp')!.vendored!.sha256;
    t.is(await vendored.locator('[data-sha256]').getAttribute('data-sha256'), sha256);
    t.true((await notice.innerText()).includes(sha256));
    t.regex(await vendored.innerText(), /vendored v0\.1\.0 · sha256 [0-9a-f]{12}…/);
    await vendored.locator('[data-restart-required]', { hasText: 'restart Traefik required' }).waitFor();
    await page.locator('[data-vendor-focus]').waitFor({ state: 'detached' });
    t.deepEqual(parse(await readFile(staticFile, 'utf8')).experimental.localPlugins.stamp, { moduleName: MODULE });
    t.true(existsSync(path.join(localDir, 'src', MODULE, '.traefik.yml')));
    await page.screenshot({ path: path.join(ARTIFACTS, 'plugins-vendored.png'), fullPage: true });

    // Un-vendor: back to experimental.plugins at the vendored version, files gone
    page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: 'Un-vendor' }).click();
    await notice
      .getByText(/Un-vendored stamp: back to experimental\.plugins at v0\.1\.0\. Restart Traefik required/)
      .waitFor();
    await row.getByRole('button', { name: 'Vendor (work offline)' }).waitFor();
    t.deepEqual(parse(await readFile(staticFile, 'utf8')).experimental.plugins.stamp, {
      moduleName: MODULE,
      version: VERSION,
    });
    t.false(existsSync(path.join(localDir, 'src', MODULE)));

    // Upload zip: the archive as the registry serves it; the sha256 shown is the upload's
    const zip = await zipSource(STAMP_SOURCE, `plugin-stamp-${VERSION.slice(1)}`);
    const uploadSha = createHash('sha256').update(zip).digest('hex');
    await row
      .locator('input[data-vendor-upload="stamp"]')
      .setInputFiles({ name: 'plugin-stamp.zip', mimeType: 'application/zip', buffer: zip });
    await notice.getByText(`Vendored stamp v0.1.0 (sha256 ${uploadSha})`, { exact: false }).waitFor();
    t.is(await row.locator('[data-sha256]').getAttribute('data-sha256'), uploadSha);
    t.is(registry.requests.length, 1, 'the upload downloaded nothing');

    // Traefik restarted with the plugins loaded: the finding goes from the open dashboard
    pluginsDisabled(false);
    await item.waitFor({ state: 'detached' });

    await assertClean(t, problems, 'plugins');
    await assertClean(t, dashboard.problems, 'dashboard');
  },
  {
    config: async (t) => {
      fake = await startFakeTraefikApi();
      t.teardown(() => fake.close());
      registry = await startPluginRegistry(t, { [MODULE]: { version: VERSION, source: STAMP_SOURCE } });
      const dir = await tempDir(t, 'sm-ui-vendor-');
      localDir = path.join(dir, 'plugins-local');
      staticFile = path.join(dir, 'traefik.yml');
      await writeFile(
        staticFile,
        `entryPoints:\n  web:\n    address: ":80"\nexperimental:\n  plugins:\n    stamp:\n      moduleName: ${MODULE}\n      version: ${VERSION}\n  localPlugins:\n    badger:\n      moduleName: github.com/fosrl/badger\n`,
      );
      return {
        proxy: { static_config_path: staticFile, plugins_local_dir: localDir },
        plugins_registry: { url: registry.url },
        live: { settle_s: 0, interval_s: 1 },
      };
    },
  },
);
