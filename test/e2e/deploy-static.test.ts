/**
 * The Traefik static configurations shipped in deploy/ start with the real Traefik binary: every key
 * as shipped, except what cannot run in a test — addresses remapped to loopback ports, container
 * paths to a temp dir, container host names to the test's Stack Manager, the plugin registry
 * replaced by local stand-ins of the same modules (Traefik would download them), the ACME server
 * by a loopback address. Traefik must start without a configuration error.
 */
import { spawn } from 'node:child_process';
import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { parse, parseDocument, type Document } from 'yaml';
import { fixture } from '../helpers/shared.ts';
import { PROVIDER_TOKEN, startStackManager } from '../helpers/traefik-stack.ts';
import {
  freePort,
  pangolinDocument,
  send,
  startBackend,
  startFakePangolin,
  startTraefik,
  tail,
  traefikTest,
  TRAEFIK_BIN,
} from '../helpers/traefik.ts';
import { tempDir } from '../helpers/build.ts';
import { REPO } from '../helpers/production-app.ts';
import { waitFor } from '../helpers/wait.ts';

const e2e = traefikTest(test);
const COMPOSE = path.join(REPO, 'deploy', 'compose');

/** Local stand-ins of the registry plugins the shipped files name, by module. */
const STAND_INS: Record<string, string> = {
  'github.com/fosrl/badger': fixture('traefik-plugins', 'badger-stub'),
  'github.com/maxlerebourg/crowdsec-bouncer-traefik-plugin': path.join(
    REPO,
    'test',
    'fixtures',
    'traefik-plugins',
    'crowdsec-stub',
  ),
};

const ANSI_COLOUR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/** Traefik's log lines at error level or worse (its default console format: `<time> ERR …`), or JSON ones. */
function errorLines(log: string): string[] {
  return (
    log
      .replace(ANSI_COLOUR, '') // the console log is coloured
      .split('\n')
      .filter((line) => / (ERR|FTL|PNC) /.test(line) || /"level":"(error|fatal|panic)"/.test(line))
      // a poll of Stack Manager that timed out on a busy machine is retried: not about the configuration
      .filter((line) => !/Provider error, retrying .*cannot fetch configuration data/.test(line))
  );
}

e2e(
  'deploy/compose traefik_config.yml (and its dynamic_config.yml) starts without a configuration error',
  async (t) => {
    const backend = await startBackend(t, 'a');
    const pangolin = await startFakePangolin(
      t,
      pangolinDocument([{ id: 1, name: 'app', host: 'app.test', backends: [backend] }]),
    );
    const sm = await startStackManager(t, { pangolinUrl: pangolin.url });
    const shipped = await readFile(path.join(COMPOSE, 'config', 'traefik', 'traefik_config.yml'), 'utf8');
    const shippedKeys = parse(shipped) as Record<string, any>;

    const traefik = await startTraefik(t, {
      providerUrl: sm.providerUrl,
      withoutBadger: true,
      pingEntryPoint: 'web', // the shipped ping.entryPoint
      env: { CROWDSEC_BOUNCER_KEY: 'e2e-bouncer-key' }, // compose passes it for dynamic_config.yml's template
      writeStatic: async ({ ports, dir }) => {
        const document = parseDocument(shipped);
        const set = (keys: string[], value: unknown) => {
          if (!document.hasIn(keys)) throw new Error(`shipped config has no ${keys.join('.')}`);
          document.setIn(keys, value);
        };
        set(['entryPoints', 'web', 'address'], `127.0.0.1:${ports.web}`);
        set(['entryPoints', 'websecure', 'address'], `127.0.0.1:${ports.websecure}`);
        // api.insecure makes Traefik open its `traefik` entry point on :8080 when none is declared
        document.setIn(['entryPoints', 'traefik', 'address'], `127.0.0.1:${ports.traefik}`);
        set(['providers', 'http', 'endpoint'], sm.providerUrl);
        set(['providers', 'http', 'headers', 'Authorization'], `Bearer ${PROVIDER_TOKEN}`);
        const dynamicFile = path.join(dir, 'dynamic_config.yml');
        await cp(path.join(COMPOSE, 'config', 'traefik', 'dynamic_config.yml'), dynamicFile);
        set(['providers', 'file', 'filename'], dynamicFile);
        // Traefik would ask the Internet for a newer release (not a key of the shipped file: its default)
        document.setIn(['global', 'checkNewVersion'], false);
        set(['accessLog', 'filePath'], path.join(dir, 'access.log'));
        set(['certificatesResolvers', 'letsencrypt', 'acme', 'storage'], path.join(dir, 'acme.json'));
        set(['certificatesResolvers', 'letsencrypt', 'acme', 'caServer'], 'https://127.0.0.1:9/directory');
        await useLocalPlugins(document, dir);
        const file = path.join(dir, 'traefik_config.yml');
        await writeFile(file, document.toString());
        return file;
      },
    });

    // the shipped dynamic config and the plugins load: crowdsec@file (on websecure) and every file router enabled
    const crowdsec = await waitFor(
      async () =>
        (await traefik.apiList('/api/http/middlewares')).find((m: { name: string }) => m.name === 'crowdsec@file'),
      2_000,
    );
    t.is(crowdsec.status, 'enabled', JSON.stringify(crowdsec));
    t.is(crowdsec.type, 'crowdsec');

    // started (ping answered on web): no error about the configuration, every shipped entry point up
    const log = traefik.log();
    const errors = errorLines(log).filter((line) => !/acme|certificate|letsencrypt/i.test(line));
    t.deepEqual(errors, [], tail(log, 80));
    t.notRegex(log, /field not found|cannot decode|failed to decode|unknown (key|field)/i);
    const entryPoints = (await traefik.apiList('/api/entrypoints')).map((entry: { name: string }) => entry.name);
    for (const name of Object.keys(shippedKeys.entryPoints)) t.true(entryPoints.includes(name), name);

    const routers = await traefik.waitForRouters(['1-app-router']);
    t.is(routers[0].status, 'enabled', JSON.stringify(routers[0]));
    const fileRouters = (await traefik.apiList('/api/http/routers')).filter(
      (router: { provider: string }) => router.provider === 'file',
    );
    t.deepEqual(fileRouters.map((router: { name: string }) => router.name).sort(), [
      'api-router@file',
      'main-app-router-redirect@file',
      'next-router@file',
      'ws-router@file',
    ]);
    for (const router of fileRouters) t.is(router.status, 'enabled', JSON.stringify(router));

    // and a resource answers on websecure through the entry point's crowdsec@file and Pangolin's badger
    const reply = await traefik.waitForReply({ entryPoint: 'websecure', host: 'app.test' }, (r) => r.status === 200);
    t.is(reply.json.headers['x-crowdsec-stub'], 'crowdsec@file');
    t.is(reply.json.headers['x-badger-stub'], 'badger@http');
  },
);

/** `experimental.plugins` (downloaded at every start) → `experimental.localPlugins` of local copies, same keys and modules. */
async function useLocalPlugins(document: Document, dir: string): Promise<void> {
  const plugins = document.getIn(['experimental', 'plugins']) as { toJSON(): Record<string, any> } | undefined;
  if (!plugins) return;
  for (const [key, entry] of Object.entries(plugins.toJSON())) {
    const source = STAND_INS[entry.moduleName];
    if (!source) throw new Error(`no local stand-in for plugin ${key} (${entry.moduleName})`);
    await cp(source, path.join(dir, 'plugins-local', 'src', entry.moduleName), { recursive: true });
    document.setIn(['experimental', 'localPlugins', key], { moduleName: entry.moduleName });
  }
  document.deleteIn(['experimental', 'plugins']);
}

e2e('deploy/cluster: the Traefik command-line static configuration serves Pangolin’s routers', async (t) => {
  const compose = parse(await readFile(path.join(REPO, 'deploy', 'cluster', 'docker-compose.yml'), 'utf8'));
  const backend = await startBackend(t, 'a');
  const pangolin = await startFakePangolin(
    t,
    pangolinDocument([{ id: 1, name: 'app', host: 'app.test', backends: [backend] }]),
  );
  const sm = await startStackManager(t, { pangolinUrl: pangolin.url });
  const dir = await tempDir(t, 'sm-cluster-traefik-');
  const ports = { web: await freePort(), websecure: await freePort() };
  const args: string[] = [];
  for (const arg of compose.services['traefik-a'].command as string[]) {
    const [flag, value] = [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)];
    const entryPoint = /^--entryPoints\.(\w+)\.address$/.exec(flag)?.[1];
    const plugin = /^--experimental\.plugins\.(\w+)\.(moduleName|version)$/.exec(flag);
    if (entryPoint) args.push(`${flag}=127.0.0.1:${ports[entryPoint as keyof typeof ports]}`);
    else if (flag === '--providers.http.endpoint') args.push(`${flag}=${sm.providerUrl}`);
    else if (plugin?.[2] === 'moduleName') {
      // the registry plugin → a local copy of the same module (Traefik would download it)
      await cp(STAND_INS[value], path.join(dir, 'plugins-local', 'src', value), { recursive: true });
      args.push(`--experimental.localPlugins.${plugin[1]}.moduleName=${value}`);
    } else if (!plugin) args.push(`${flag}=${value.replace('${PROVIDER_TOKEN}', PROVIDER_TOKEN)}`);
  }
  t.true(args.some((arg) => arg.startsWith('--providers.http.pollInterval=')));
  let output = '';
  const child = spawn(TRAEFIK_BIN!, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  t.teardown(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  });
  // no /ping in this configuration: the proof it runs is the discovered resource answering on websecure
  const reply = await waitFor(async () => {
    if (child.exitCode !== null) throw new Error(`Traefik exited (${child.exitCode}): ${output}`);
    const answer = await send(ports.websecure, { host: 'app.test', path: '/', tls: true }).catch(() => null);
    return answer?.status === 200 ? answer : null;
  }, 10_000);
  t.is(reply.json.headers['x-badger-stub'], 'badger@http');
  const redirect = await send(ports.web, { host: 'app.test', path: '/' });
  t.is(redirect.headers.location, 'https://app.test/');
  t.deepEqual(errorLines(output), [], output);
});
