/**
 * A basicAuth/digestAuth `usersFile` is a path on Traefik's disk, which Stack Manager cannot see:
 * our API accepts any path, and a file Traefik does not have is reported live (API.md §4.19).
 * Against the real Traefik 3.7.15: a middleware naming a missing file is disabled with
 * `open <path>: no such file or directory`, every router using it too (404); the resource's
 * `live` turns `disabled` with the router's error and the diagnosis holds one `middleware_error`
 * per middleware naming it, Traefik's text and the resource, with a fix about Traefik's disk.
 * Once the file exists on Traefik's side, the same middleware loads and the finding clears.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { hookTeardowns } from '../helpers/hook-context.ts';
import { traefikTest, TRAEFIK_BIN } from '../helpers/traefik.ts';
import { waitFor } from '../helpers/wait.ts';
import {
  diagnosis,
  startLiveStack,
  waitForCleared,
  waitForFinding,
  waitForLive,
  type LiveStack,
} from './live-support.ts';

const hook = hookTeardowns(test);
let stack: LiveStack;
let dir: string;

const RESOURCES = [
  { id: 7, name: 'basic', host: 'basic.test', backends: ['app'] },
  { id: 8, name: 'digest', host: 'digest.test', backends: ['app'] },
];

test.before(async (t) => {
  if (!TRAEFIK_BIN) return;
  dir = await mkdtemp(path.join(tmpdir(), 'sm-users-file-'));
  hook.context(t).teardown(() => rm(dir, { recursive: true, force: true }));
  stack = await startLiveStack(hook.context(t), { backends: ['app'], resources: RESOURCES });
});

const CASES = [
  {
    type: 'basicAuth',
    resource: '7-basic-router',
    host: 'basic.test',
    user: 'alice:$apr1$H6uskkkW$IgXLP6ewTrSuBkTrqE8wj/',
  },
  {
    type: 'digestAuth',
    resource: '8-digest-router',
    host: 'digest.test',
    user: 'alice:traefik:4f0a8a2e3d3c4e5bb1f6a1c2d3e4f5a6',
  },
];

traefikTest(test)(
  'a usersFile missing on Traefik: accepted by our API, then middleware_error naming the middleware, the file and the resource',
  async (t) => {
    for (const c of CASES) await waitForLive(stack, c.resource, 'live', Date.now());
    const changed = Date.now();
    const files = new Map<string, string>();
    for (const c of CASES) {
      const id = `users-${c.type.toLowerCase()}`;
      const file = path.join(dir, `${id}.htpasswd`);
      files.set(id, file);
      const created = await stack.sm.call('POST', '/api/middlewares', {
        id,
        name: id,
        type: c.type,
        config: { usersFile: file },
      });
      t.is(created.status, 201, created.text); // Stack Manager cannot tell whether Traefik has the file
      const assigned = await stack.sm.call('POST', `/api/resources/${c.resource}/middlewares`, { middleware_id: id });
      t.is(assigned.status, 200, assigned.text);
    }

    for (const [i, c] of CASES.entries()) {
      const id = `users-${c.type.toLowerCase()}`;
      const expected = `open ${files.get(id)}: no such file or directory`;
      // Traefik's side: the middleware and the router disabled with that error, 404
      const middleware = await waitFor(async () => {
        const found = await stack.traefik.api(`/api/http/middlewares/${id}@http`).catch(() => null);
        return found?.error?.length > 0 ? found : null;
      }, 5_000);
      t.deepEqual(middleware.error, [expected]);
      const router = await waitFor(async () => {
        const found = await stack.traefik.api(`/api/http/routers/${c.resource}@http`);
        return found.status === 'disabled' ? found : null;
      }, 5_000);
      t.deepEqual(router.error, [expected]);
      t.is((await stack.traefik.request({ entryPoint: 'websecure', host: c.host })).status, 404);

      // ours: the resource's live status and the diagnosis
      const { live, seconds } = await waitForLive(stack, c.resource, 'disabled', changed);
      t.deepEqual(live.instances[0].errors, [expected]);
      const raised = await waitForFinding(
        stack,
        (f) => f.kind === 'middleware_error' && f.middlewares.includes(`${id}@http`),
        changed,
      );
      t.log(
        `${c.type}: resource disabled ${seconds.toFixed(1)} s, ${raised.finding.id} ${raised.seconds.toFixed(1)} s after`,
      );
      t.log(`  message: ${raised.finding.message}`);
      t.log(`  fix: ${raised.finding.fix}`);
      t.is(raised.finding.id, `middleware_error:traefik:${id}@http`);
      t.is(raised.finding.severity, 'error');
      t.deepEqual(raised.finding.resources, [c.resource]);
      t.true(raised.finding.message.includes(expected), raised.finding.message);
      t.true(raised.finding.fix.includes(files.get(id)!), raised.finding.fix);
      t.regex(raised.finding.fix, /Traefik/);
      if (i === 0)
        t.false((await diagnosis(stack)).findings.some((f: { kind: string }) => f.kind === 'router_disabled'));
    }

    // the files created where Traefik reads them: the same middlewares load, the findings clear
    const fixed = Date.now();
    for (const [i, c] of CASES.entries())
      await writeFile(files.get(`users-${c.type.toLowerCase()}`)!, `${CASES[i].user}\n`);
    // Traefik reads the file only when it builds the middleware: a change of the dynamic
    // configuration (here the realm; a new display name alone changes nothing Traefik sees) rebuilds it
    const touched = await stack.sm.call('PUT', '/api/middlewares/users-basicauth', {
      name: 'users-basicauth',
      type: 'basicAuth',
      config: { usersFile: files.get('users-basicauth'), realm: 'files' },
    });
    t.is(touched.status, 200, touched.text);
    for (const c of CASES) {
      await stack.traefik.waitForReply({ entryPoint: 'websecure', host: c.host }, (r) => r.status === 401);
      const again = await waitForLive(stack, c.resource, 'live', fixed);
      const cleared = await waitForCleared(stack, `middleware_error:traefik:users-${c.type.toLowerCase()}@http`, fixed);
      t.log(
        `${c.type}: live again ${again.seconds.toFixed(1)} s, cleared ${cleared.toFixed(1)} s after the file was created`,
      );
    }
  },
);
