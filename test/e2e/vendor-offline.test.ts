/**
 * Offline plugins (API.md §4.20, issue 27) with a real Traefik 3.7 and no network: the static config
 * holds a remote `experimental.plugins` entry whose registry Traefik cannot reach (its HTTPS proxy is
 * a closed port), so Traefik disables every plugin — the Pangolin resource's router is disabled,
 * the host answers 404 and our diagnosis raises `plugins_disabled` naming the plugin. Vendoring
 * through our API (an uploaded zip, or one downloaded from the loopback registry while it is up)
 * moves the entry to `experimental.localPlugins`; Traefik restarted on that file, still offline,
 * answers 200 with the plugin's header and the finding clears.
 *
 * The plugins-local directory: Traefik reads `<its cwd>/plugins-local`; Stack Manager's
 * `plugins_local_dir` is a symbolic link to it elsewhere — as in the deploy, where one host dir is
 * mounted into both containers at different paths.
 */
import { readFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { parse } from 'yaml';
import { tempDir } from '../helpers/build.ts';
import { startPluginRegistry } from '../helpers/plugin-registry.ts';
import { PROVIDER_TOKEN, startStackManager } from '../helpers/traefik-stack.ts';
import {
  freePort,
  pangolinDocument,
  startBackend,
  startFakePangolin,
  startTraefik,
  traefikTest,
  type Traefik,
} from '../helpers/traefik.ts';
import type { Stack } from '../helpers/traefik-stack.ts';
import { waitFor } from '../helpers/wait.ts';
import { zipSource } from '../helpers/zip.ts';
import { LIVE, waitForCleared, waitForFinding, type Finding } from './live-support.ts';

const e2e = traefikTest(test);
const MODULE = 'github.com/stack-manager-e2e/plugin-stamp';
const VERSION = 'v0.1.0';
const STAMP_SOURCE = path.resolve(import.meta.dirname, '..', 'fixtures', 'traefik-plugins', 'stamp');
const REQUEST = { entryPoint: 'websecure', host: 'app.test', path: '/offline' };
const ROUTER = '1-app-router@http';

interface Offline extends Stack {
  staticFile: string;
  /** Seconds from starting Traefik until its API lists the resource's router disabled. */
  disabledAfterS: number;
  finding: Finding;
}

/**
 * A stack whose Traefik cannot download plugins: the stamp plugin is a remote entry of its static
 * config and used by the resource's router; returns once Traefik has disabled that router and our
 * diagnosis has raised `plugins_disabled`.
 */
async function startOffline(t: ExecutionContext, registryUrl: string): Promise<Offline> {
  const backend = await startBackend(t, 'a');
  const pangolin = await startFakePangolin(
    t,
    pangolinDocument([{ id: 1, name: 'app', host: 'app.test', backends: [backend] }]),
  );
  const apiPort = await freePort();
  const localDir = path.join(await tempDir(t, 'sm-mounts-'), 'plugins-local');
  const sm = await startStackManager(t, {
    pangolinUrl: pangolin.url,
    traefikUrl: `http://127.0.0.1:${apiPort}`,
    config: { live: LIVE, proxy: { plugins_local_dir: localDir }, plugins_registry: { url: registryUrl } },
  });
  // the plugin's middleware on the resource before Traefik ever reads the document
  const created = await sm.call('POST', '/api/middlewares', {
    id: 'stamp-it',
    name: 'stamp it',
    type: 'plugin',
    config: { stamp: { value: 'stamped-offline' } },
  });
  if (created.status !== 201) throw new Error(`POST /api/middlewares: ${created.status} ${created.text}`);
  const assigned = await sm.call('POST', '/api/resources/1-app-router/middlewares', { middleware_id: 'stamp-it' });
  if (assigned.status !== 200) throw new Error(`assign: ${assigned.status} ${assigned.text}`);

  // no network: Traefik's only way to the plugin registry is an HTTPS proxy on a closed port
  const closedPort = await freePort();
  const started = Date.now();
  const traefik = await startTraefik(t, {
    providerUrl: sm.providerUrl,
    token: PROVIDER_TOKEN,
    ports: { traefik: apiPort },
    env: { HTTPS_PROXY: `http://127.0.0.1:${closedPort}`, https_proxy: `http://127.0.0.1:${closedPort}` },
    editStatic: (config) => {
      config.experimental.plugins = { stamp: { moduleName: MODULE, version: VERSION } };
    },
  });
  const [router] = await waitFor(async () => {
    const routers = (await traefik.apiList('/api/http/routers')) as Array<{
      name: string;
      status: string;
      error?: string[];
    }>;
    const found = routers.find((r) => r.name === ROUTER);
    return found?.status === 'disabled' ? [found] : null;
  }, 5_000);
  const disabledAfterS = (Date.now() - started) / 1000;
  t.log(`Traefik start → ${ROUTER} disabled: ${disabledAfterS.toFixed(2)} s; Traefik: ${JSON.stringify(router.error)}`);

  await symlink(path.join(traefik.dir, 'plugins-local'), localDir);
  const staticFile = path.join(traefik.dir, 'traefik.yml');
  const put = await sm.call('PUT', '/api/plugins/configpath', { path: staticFile });
  if (put.status !== 200) throw new Error(`PUT /api/plugins/configpath: ${put.status} ${put.text}`);

  const stack = { backends: [backend], pangolin, sm, traefik };
  // Traefik names only badger@http (local, but disabled with every plugin); with the static config
  // known, the finding names the remote plugin whose download failed
  const { finding, seconds } = await waitForFinding(
    stack,
    (f) => f.kind === 'plugins_disabled' && f.fix.includes('POST /api/plugins/stamp/vendor'),
    started,
  );
  t.log(`plugins_disabled ${seconds.toFixed(2)} s after Traefik started: ${finding.message} — fix: ${finding.fix}`);
  return { ...stack, staticFile, disabledAfterS, finding };
}

/** What every offline start shows: 404, Traefik's own reason, the finding naming stamp and its fix. */
async function assertDisabled(t: ExecutionContext, offline: Offline): Promise<void> {
  const reply = await offline.traefik.waitForReply(REQUEST, (r) => r.status === 404);
  t.is(reply.status, 404);
  t.is(offline.backends[0].requests.length, 0, 'nothing reached the backend');
  t.regex(offline.traefik.log(), /Plugins are disabled because an error has occurred/);
  t.like(offline.finding, { severity: 'error', resources: ['1-app-router'] });
  t.true(offline.finding.middlewares.includes('badger@http'), JSON.stringify(offline.finding));
  t.true(offline.finding.message.includes('experimental.plugins (stamp)'), offline.finding.message);
  t.false(offline.finding.fix.includes('/api/plugins/badger/vendor'), 'badger is local already');
  const listed = await offline.sm.call('GET', '/api/plugins');
  t.like(
    listed.json.find((plugin: { key: string }) => plugin.key === 'stamp'),
    { local: false, vendored: null, version: VERSION },
  );
}

/** Restarts Traefik (still offline) on the edited static config; the router answers with the plugin's effect. */
async function assertBackOnline(t: ExecutionContext, offline: Offline, sha256: string): Promise<number> {
  const written = parse(await readFile(offline.staticFile, 'utf8'));
  t.deepEqual(written.experimental.localPlugins.stamp, { moduleName: MODULE });
  t.is(written.experimental.plugins, undefined, 'the emptied remote section is gone');
  const disabledLogs = count(offline.traefik, /Plugins are disabled/g);

  const restarted = Date.now();
  await offline.traefik.restart();
  const reply = await offline.traefik.waitForReply(REQUEST, (r) => r.status === 200);
  const backAfterS = (Date.now() - restarted) / 1000;
  t.log(`restart → 200 through Traefik: ${backAfterS.toFixed(2)} s`);
  t.is(reply.headers['x-stamp'], 'stamped-offline');
  t.is(reply.json.headers['x-stamp'], 'stamped-offline', 'the backend saw the plugin’s header');
  t.is(reply.json.headers['x-badger-stub'], 'badger@http', 'the local badger runs again too');
  t.is(count(offline.traefik, /Plugins are disabled/g), disabledLogs, 'no plugin failure on the new start');
  const [router] = await offline.traefik.waitForRouters(['1-app-router']);
  t.is(router.status, 'enabled');

  const clearedAfterS = await waitForCleared(offline, offline.finding.id, restarted);
  t.log(`restart → plugins_disabled cleared: ${clearedAfterS.toFixed(2)} s`);
  const listed = await offline.sm.call('GET', '/api/plugins');
  const stamp = listed.json.find((plugin: { key: string }) => plugin.key === 'stamp');
  t.like(stamp, { local: true, status: 'loaded', vendored: { version: VERSION, sha256 } });
  return backAfterS;
}

const count = (traefik: Traefik, pattern: RegExp): number => traefik.log().match(pattern)?.length ?? 0;

e2e(
  'offline: a remote plugin Traefik cannot download disables the router (404, plugins_disabled); an uploaded zip vendored through the API brings it back after a restart',
  async (t) => {
    // the registry Stack Manager would download from is closed too: the upload is the only way in
    const offline = await startOffline(t, `http://127.0.0.1:${await freePort()}`);
    await assertDisabled(t, offline);
    const refused = await offline.sm.call('POST', '/api/plugins/stamp/vendor');
    t.is(refused.status, 502, refused.text);
    t.like(refused.json, { id: 'upstream_unavailable' });

    const zip = await zipSource(STAMP_SOURCE, `plugin-stamp-${VERSION.slice(1)}`);
    const response = await fetch(`${offline.sm.base}/api/plugins/stamp/vendor`, {
      method: 'POST',
      headers: { 'content-type': 'application/zip' },
      body: new Uint8Array(zip),
    });
    const vendored = await response.json();
    t.is(response.status, 200, JSON.stringify(vendored));
    t.is(response.headers.get('x-restart-required'), 'true');
    t.like(vendored, {
      key: 'stamp',
      module_name: MODULE,
      version: VERSION,
      local: true,
      restart_required: ['traefik'],
    });
    t.regex(vendored.sha256, /^[0-9a-f]{64}$/);
    // written where Traefik reads it, through the other path
    const traefikCopy = path.join(offline.traefik.dir, 'plugins-local', 'src', MODULE, '.traefik.yml');
    t.regex(await readFile(traefikCopy, 'utf8'), new RegExp(`import: ${MODULE}`));

    const backAfterS = await assertBackOnline(t, offline, vendored.sha256);
    t.log(`figures: start → disabled ${offline.disabledAfterS.toFixed(2)} s, restart → 200 ${backAfterS.toFixed(2)} s`);
  },
);

e2e(
  'offline: vendoring downloads the plugin from the registry while it is up; Traefik restarted with the registry gone answers 200 with the plugin’s effect',
  async (t) => {
    const registry = await startPluginRegistry(t, { [MODULE]: { version: VERSION, source: STAMP_SOURCE } });
    const offline = await startOffline(t, registry.url);
    await assertDisabled(t, offline);

    const vendored = await offline.sm.call('POST', '/api/plugins/stamp/vendor');
    t.is(vendored.status, 200, vendored.text);
    t.deepEqual(registry.requests, [`/public/download/${MODULE}/${VERSION}`], 'only our download reached it');
    t.like(vendored.json, { key: 'stamp', module_name: MODULE, version: VERSION, local: true });

    await registry.stop();
    const backAfterS = await assertBackOnline(t, offline, vendored.json.sha256);
    t.deepEqual(registry.requests, [`/public/download/${MODULE}/${VERSION}`], 'Traefik downloaded nothing');
    t.log(`figures: start → disabled ${offline.disabledAfterS.toFixed(2)} s, restart → 200 ${backAfterS.toFixed(2)} s`);
  },
);
