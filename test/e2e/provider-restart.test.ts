/**
 * A restart of Stack Manager under a real Traefik (issue 25 item 3, API.md §4.9 restart snapshot):
 * the compiled server as the image runs it (`node dist/plugins/main.js`) on a fixed port is stopped
 * and started again while a client keeps sending requests through Traefik. Traefik keeps its
 * configuration while the server is down, gets the restart snapshot (200, `X-Config-Stale: true`,
 * the same ETag) while the new process builds its app, then the app's own generation with the same
 * bytes: every request answers, and Traefik never reloads.
 *
 * Traefik polls through a small recording HTTP relay in front of the server (on the server's
 * address Traefik would see the same thing; the relay only writes down each poll's status, ETag
 * and stale header, and drops the connection when the server is down, as a refused connect would).
 */
import { rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import anyTest, { type TestFn } from 'ava';
import { useProductionApp, serverEnv, startServer, type ServerProcess } from '../helpers/production-app.ts';
import { writeSources } from '../resources/support.ts';
import { holdPlugin } from '../helpers/production-app.ts';
import { clientLoop } from '../helpers/traefik-loop.ts';
import { PROVIDER_TOKEN } from '../helpers/traefik-stack.ts';
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
import { waitFor } from '../helpers/wait.ts';

const test = anyTest as TestFn<{ app: string; remove: () => Promise<void> }>;
const e2e = traefikTest(test);

useProductionApp(test, Boolean(TRAEFIK_BIN));

interface Poll {
  at: number;
  /** 0: the server was not there (connection refused or reset) */
  status: number;
  etag?: string;
  stale: boolean;
}

/** The relay Traefik polls: forwards to the server's fixed port and records every poll. */
async function startRelay(t: { teardown: (fn: () => unknown) => void }, serverPort: number) {
  const polls: Poll[] = [];
  const server = http.createServer((request, response) => {
    const upstream = http.request(
      { host: '127.0.0.1', port: serverPort, method: request.method, path: request.url, headers: request.headers },
      (reply) => {
        polls.push({
          at: Date.now(),
          status: reply.statusCode ?? 0,
          etag: reply.headers.etag,
          stale: reply.headers['x-config-stale'] === 'true',
        });
        response.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(response);
      },
    );
    upstream.on('error', () => {
      polls.push({ at: Date.now(), status: 0, stale: false });
      request.socket.destroy();
    });
    request.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { polls, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/proxy-config` };
}

e2e(
  'Stack Manager restarts (compiled server, fixed port): routes keep answering, Traefik polls the restart snapshot, no reload',
  async (t) => {
    const work = await mkdtemp(path.join(tmpdir(), 'sm-e2e-restart-'));
    t.teardown(() => rm(work, { recursive: true, force: true }));
    const backend = await startBackend(t, 'a');
    const pangolin = await startFakePangolin(
      t,
      pangolinDocument([{ id: 1, name: 'app', host: 'app.test', backends: [backend] }]),
    );
    const dataDir = path.join(work, 'data');
    await writeSources(dataDir, { pangolinUrl: pangolin.url, url: 'http://127.0.0.1:9' } as never, {
      pollIntervalS: 1,
      timeoutMs: 5_000,
    });
    const hold = await holdPlugin(work);
    await writeFile(hold.release, '');
    const port = await freePort();
    const env = serverEnv(work, {
      PORT: String(port),
      PROVIDER_TOKEN,
      AUTH_MODE: 'off',
      PANGOLIN_URL: pangolin.url,
      PLUGINS_DIR: hold.dir,
      PLUGINS_ENABLED: 'hold',
    });
    const servers: ServerProcess[] = [];
    t.teardown(() => servers.forEach((server) => server.child.kill('SIGKILL')));
    const start = async () => {
      const server = startServer(t.context.app, env);
      servers.push(server);
      await server.line('Stack Manager listening');
      return server;
    };
    const api = (method: string, url: string, body?: unknown) =>
      fetch(`http://127.0.0.1:${port}${url}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then(async (response) => ({ status: response.status, json: (await response.json()) as any }));

    const first = await start();
    await first.line('Stack Manager ready');
    await waitFor(async () => (await api('GET', '/api/resources/1-app-router')).status === 200, 5_000);
    // our own part of the document: a headers middleware assigned to the Pangolin resource
    const created = await api('POST', '/api/middlewares', {
      name: 'Mark',
      type: 'headers',
      config: { customResponseHeaders: { 'X-Mark': 'ours' } },
    });
    t.is(created.status, 201, JSON.stringify(created.json));
    t.is((await api('POST', '/api/resources/1-app-router/middlewares', { middleware_id: 'mark' })).status, 200);

    const relay = await startRelay(t, port);
    const traefik = await startTraefik(t, { providerUrl: relay.url, token: PROVIDER_TOKEN, metrics: true });
    const request = { entryPoint: 'websecure', host: 'app.test', path: '/' };
    await traefik.waitForReply(request, (r) => r.status === 200 && r.headers['x-mark'] === 'ours');
    const etag = (await api('GET', '/api/proxy-config/status')).json.etag as string;
    // Traefik has the current document: a poll of it seen after the assignment
    await waitFor(() => relay.polls.some((poll) => poll.etag === `"${etag}"`), 2_000);
    const reloads = async () => {
      const reply = await send(traefik.ports.traefik, { host: '127.0.0.1', path: '/metrics' });
      return Number(
        reply.body
          .split('\n')
          .find((line) => line.startsWith('traefik_config_reloads_total '))
          ?.split(' ')[1],
      );
    };
    const reloadsBefore = await reloads();

    const loop = clientLoop(traefik, [
      { ...request, expected: 200 },
      { host: 'app.test', path: '/r', expected: (await traefik.request({ host: 'app.test', path: '/r' })).status },
    ]);
    t.teardown(() => loop.stop());

    // stop: Traefik's polls fail while no process listens
    await rm(hold.release);
    first.child.kill('SIGTERM');
    t.is((await first.exit).code, 0, first.stderr());
    const down = relay.polls.length;
    await waitFor(() => relay.polls.slice(down).some((poll) => poll.status === 0), 3_000);

    // start: the early server serves the snapshot while the app is held
    const second = await start();
    const listening = await second.line('Stack Manager listening');
    t.is(listening.snapshot, `"${etag}"`, 'the snapshot is the last generation of the first run');
    const early = relay.polls.length;
    const earlyPolls = await waitFor(() => {
      const polls = relay.polls.slice(early).filter((poll) => poll.status !== 0);
      return polls.length >= 2 ? polls : null;
    }, 3_000);
    t.false(
      second.lines.some((line) => line.msg === 'Stack Manager ready'),
      'the app is still being built (held)',
    );
    t.deepEqual(
      earlyPolls.map(({ status, etag: tag, stale }) => ({ status, etag: tag, stale })),
      earlyPolls.map(() => ({ status: 200, etag: `"${etag}"`, stale: true })),
    );

    // release: the app's own generation, the same bytes, no longer stale
    await writeFile(hold.release, '');
    await second.line('Stack Manager ready');
    const ready = relay.polls.length;
    await waitFor(() => relay.polls.slice(ready).some((poll) => poll.status === 200 && !poll.stale), 5_000);
    t.is((await api('GET', '/api/proxy-config/status')).json.etag, etag, 'same bytes after the restart');
    // a few more requests through the restarted stack, then the loop's verdict
    const seen = loop.answers.length;
    await waitFor(() => loop.answers.length >= seen + 20, 2_000);
    const answers = await loop.stop();

    const statuses = relay.polls.map((poll) =>
      poll.status === 0 ? 'down' : `${poll.status}${poll.stale ? ' stale' : ''}`,
    );
    const counts = statuses.reduce<Record<string, number>>((all, s) => ({ ...all, [s]: (all[s] ?? 0) + 1 }), {});
    t.log(
      `${answers.length} requests over ${answers.at(-1)?.at} ms through the restart; Traefik's polls: ${JSON.stringify(counts)}`,
    );
    t.deepEqual(loop.unexpected().slice(0, 10), [], tail(traefik.log()));
    t.is(await reloads(), reloadsBefore, 'Traefik did not reload: the same bytes before, during and after');
  },
);
