/**
 * Provider behaviour through a real Traefik (issue 25 item 3): a hand edit of a data file reaches
 * Traefik within its poll interval + 2 s; routes keep answering while the Pangolin upstream fails,
 * hangs or answers `{}`; unchanged bytes never make Traefik reload (its
 * `traefik_config_reloads_total` metric), a changed document makes it reload once.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { parse, stringify } from 'yaml';
import { hookTeardowns } from '../helpers/hook-context.ts';
import { clientLoop } from '../helpers/traefik-loop.ts';
import { PROVIDER_TOKEN, startStack, type Stack } from '../helpers/traefik-stack.ts';
import { send, tail, traefikTest, TRAEFIK_BIN, type TraefikRequest } from '../helpers/traefik.ts';
import { waitFor } from '../helpers/wait.ts';

const e2e = traefikTest(test);
const hook = hookTeardowns(test);
let stack: Stack;

/** Traefik's `providers.http.pollInterval` in the harness. */
const POLL_INTERVAL_MS = 1_000;
/** The contract: a hand edit is effective through Traefik within pollInterval + 2 s. */
const EDIT_BUDGET_MS = POLL_INTERVAL_MS + 2_000;
/** Traefik's default `providers.providersThrottleDuration`, in seconds. */
const THROTTLE_S = 2;

const RESOURCES = [
  { id: 1, name: 'edit', host: 'edit.test', backends: ['a'] },
  { id: 2, name: 'override', host: 'override.test', backends: ['a'] },
  { id: 3, name: 'steady', host: 'steady.test', backends: ['a'] },
  { id: 4, name: 'other', host: 'other.test', backends: ['a'] },
];

test.before(async (t) => {
  if (!TRAEFIK_BIN) return;
  stack = await startStack(hook.context(t), { resources: RESOURCES, traefik: { metrics: true } });
});

/** One of Traefik's own Prometheus metrics (on the `traefik` entry point), without labels. */
async function metric(name: string): Promise<number> {
  const reply = await send(stack.traefik.ports.traefik, { host: '127.0.0.1', path: '/metrics' });
  const line = reply.body.split('\n').find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`no ${name} in Traefik's metrics:\n${reply.body.slice(0, 2000)}`);
  return Number(line.split(' ').at(-1));
}

/** Traefik's `traefik_config_reloads_total`. */
const reloads = () => metric('traefik_config_reloads_total');

/**
 * Traefik applies a provider's first new document at once, then none before
 * `providers.providersThrottleDuration` (default 2 s) has passed since. The contract's figure is
 * for an edit, not for Traefik's throttle behind a previous one: each timed edit starts once
 * Traefik's last reload (`traefik_config_last_reload_success`, Unix seconds) is that old.
 */
async function throttleOver(): Promise<void> {
  await waitFor(
    async () => Date.now() / 1000 - (await metric('traefik_config_last_reload_success')) > THROTTLE_S + 0.05,
    THROTTLE_S * 1000,
    50,
  );
}

/** Last time Traefik (Go's HTTP client) polled the default document, from our status's `instances`. */
async function lastTraefikPoll(): Promise<number> {
  const status = (await stack.sm.call('GET', '/api/proxy-config/status')).json;
  const instances = status.targets.find((target: { id: string }) => target.id === 'default').instances as Array<{
    user_agent: string;
    last_poll: string;
  }>;
  const traefik = instances.find((instance) => instance.user_agent.startsWith('Go-http-client'));
  return traefik ? Date.parse(traefik.last_poll) : 0;
}

/** Waits until Traefik has polled our provider `n` more times (each poll seen after the previous one). */
async function traefikPolls(n: number): Promise<void> {
  let last = await lastTraefikPoll();
  for (let i = 0; i < n; i++) {
    const before = last;
    last = await waitFor(async () => {
      const poll = await lastTraefikPoll();
      return poll > before ? poll : 0;
    }, POLL_INTERVAL_MS * 2);
  }
}

/** The provider document as Traefik gets it (with the provider token). */
async function providerText(): Promise<string> {
  const reply = await stack.sm.call('GET', '/api/v1/proxy-config', undefined, {
    authorization: `Bearer ${PROVIDER_TOKEN}`,
  });
  return reply.text;
}

interface EditTime {
  /** from the write to the first reply through Traefik showing the edit */
  total: number;
  /** from the write to the first provider document of ours holding it */
  served: number;
}

/**
 * Writes a file by hand and measures until a request through Traefik satisfies `check` (the wait
 * is waitFor's, 20 ms between requests), and when our provider first served a document containing
 * `marker` (our part of that time).
 */
async function timedHandEdit(
  file: string,
  edit: (doc: any) => void,
  marker: string,
  request: TraefikRequest,
  check: (reply: Awaited<ReturnType<Stack['traefik']['request']>>) => boolean,
): Promise<EditTime> {
  const doc = parse(await readFile(file, 'utf8'));
  edit(doc);
  const text = stringify(doc);
  await throttleOver();
  const started = performance.now();
  // saved by rename, as editors do (an in-place write can show the watcher the truncated file first)
  await writeFile(`${file}.edit.tmp`, text);
  await rename(`${file}.edit.tmp`, file);
  const served = waitFor(async () => (await providerText()).includes(marker), EDIT_BUDGET_MS, 20).then(
    () => performance.now() - started,
  );
  await waitFor(
    async () => {
      const reply = await stack.traefik.request(request).catch(() => undefined);
      return reply && check(reply);
    },
    EDIT_BUDGET_MS,
    20,
  );
  return { total: performance.now() - started, served: await served };
}

/**
 * Asserts the contract's figure without flaking on a loaded machine: each edit is measured and
 * reported, and the best of the three must be within pollInterval + 2 s (one slow edit on a busy
 * CI box is load; three in a row over budget is ours).
 */
function assertWithinBudget(
  t: { log: (...v: unknown[]) => void; true: (c: boolean, m?: string) => void },
  times: EditTime[],
  what: string,
) {
  const figures = times.map(({ total, served }) => `${Math.round(total)} ms (ours ${Math.round(served)})`);
  t.log(`${what}: ${figures.join(', ')}; budget ${EDIT_BUDGET_MS} ms`);
  const best = Math.min(...times.map(({ total }) => total));
  t.true(best <= EDIT_BUDGET_MS, `best of ${times.length} ${what} took ${Math.round(best)} ms > ${EDIT_BUDGET_MS} ms`);
}

e2e('a hand edit of a middleware file is effective through Traefik within pollInterval + 2 s', async (t) => {
  const created = await stack.sm.call('POST', '/api/middlewares', {
    name: 'Edit headers',
    type: 'headers',
    config: { customResponseHeaders: { 'X-Edit': 'v0' } },
  });
  t.is(created.status, 201, created.text);
  const id = created.json.id as string;
  const assigned = await stack.sm.call('POST', '/api/resources/1-edit-router/middlewares', {
    middleware_id: id,
    priority: 100,
  });
  t.is(assigned.status, 200, assigned.text);
  const request = { entryPoint: 'websecure', host: 'edit.test', path: '/' };
  await stack.traefik.waitForReply(request, (r) => r.status === 200 && r.headers['x-edit'] === 'v0');

  const file = path.join(stack.sm.dataDir, 'middlewares', `${id}.yaml`);
  const times: EditTime[] = [];
  for (let i = 1; i <= 3; i++) {
    const value = `v${i}`;
    times.push(
      await timedHandEdit(
        file,
        (doc) => (doc.config.customResponseHeaders['X-Edit'] = value),
        `"X-Edit":"${value}"`,
        request,
        (r) => r.status === 200 && r.headers['x-edit'] === value,
      ),
    );
  }
  // the API sees the hand edit as well
  t.is((await stack.sm.call('GET', `/api/middlewares/${id}`)).json.config.customResponseHeaders['X-Edit'], 'v3');
  assertWithinBudget(t, times, 'middleware file edit → Traefik');
});

e2e('a hand edit of a resource override is effective through Traefik within pollInterval + 2 s', async (t) => {
  const request = { entryPoint: 'websecure', host: 'override.test', path: '/' };
  await stack.traefik.waitForReply(request, (r) => r.status === 200);
  const file = path.join(stack.sm.dataDir, 'resources', '2-override-router.yaml');
  const times: EditTime[] = [];
  for (let i = 1; i <= 3; i++) {
    const value = `o${i}`;
    times.push(
      await timedHandEdit(
        file,
        (doc) => (doc.config = { ...doc.config, headers: { request: { 'X-Override': value }, response: {} } }),
        `"X-Override":"${value}"`,
        request,
        // the request header override reaches the backend, which echoes what it received
        (r) => r.status === 200 && r.json?.headers['x-override'] === value,
      ),
    );
  }
  const resource = (await stack.sm.call('GET', '/api/resources/2-override-router')).json;
  t.deepEqual(resource.config.headers.request, { 'X-Override': 'o3' });
  t.true(resource.effective_middlewares.includes('2-override-router_headers'));
  assertWithinBudget(t, times, 'resource override edit → Traefik');
});

e2e('unchanged bytes make Traefik reload nothing; a changed document makes it reload once', async (t) => {
  const request = { entryPoint: 'websecure', host: 'other.test', path: '/' };
  await stack.traefik.waitForReply(request, (r) => r.status === 200);
  // settle: Traefik has polled the current document at least once
  await traefikPolls(2);
  const etag = (await stack.sm.call('GET', '/api/proxy-config/status')).json.etag;
  const before = await reloads();
  const received = () => stack.traefik.log().split('Configuration received').length - 1;
  const receivedBefore = received();
  const upstreamBefore = stack.pangolin.requests;
  await traefikPolls(4);
  t.true(stack.pangolin.requests > upstreamBefore, 'Stack Manager re-fetched the upstream meanwhile');
  t.is((await stack.sm.call('GET', '/api/proxy-config/status')).json.etag, etag, 'same bytes served');
  t.is(await reloads(), before, 'four polls of the same bytes: no reload');
  // Traefik 3's HTTP provider drops a body whose hash equals the last one before its configuration
  // watcher sees it (so not even its DEBUG "Skipping unchanged configuration" is logged)
  t.is(received(), receivedBefore, 'no "Configuration received" in Traefik\'s DEBUG log');

  // a real change (one API call, one new document): exactly one more reload
  const changed = await stack.sm.call('PUT', '/api/resources/4-other-router/config/headers', {
    request: {},
    response: { 'X-Other': '1' },
  });
  t.is(changed.status, 200, changed.text);
  await stack.traefik.waitForReply(request, (r) => r.headers['x-other'] === '1');
  await traefikPolls(2);
  const after = await reloads();
  t.is(after, before + 1, `reloads ${before} → ${after}`);
  t.log(`traefik_config_reloads_total: ${before} over 4 unchanged polls, ${after} after one change`);
});

e2e('routes keep answering while Pangolin answers 500, hangs, or answers {} (no 404 window)', async (t) => {
  const request = { entryPoint: 'websecure', host: 'steady.test', path: '/' };
  await stack.traefik.waitForReply(request, (r) => r.status === 200);
  const reloadsBefore = await reloads();
  // Pangolin's -redirect router on web answers its redirect all along too
  const redirect = await stack.traefik.request({ ...request, entryPoint: 'web', path: '/x' });
  t.is(redirect.headers.location, 'https://steady.test/x');
  const loop = clientLoop(stack.traefik, [
    request,
    { ...request, entryPoint: 'web', path: '/x', expected: redirect.status },
  ]);
  t.teardown(() => loop.stop());
  const status = async () => (await stack.sm.call('GET', '/api/proxy-config/status')).json;
  const log: string[] = [];

  // 500 on three syncs in a row; one hang (the source's 5 s timeout, Traefik polls about five times meanwhile)
  for (const [fault, count] of [
    ['500', 3],
    ['timeout', 1],
  ] as const) {
    const mark = Date.now();
    stack.pangolin.fault = fault;
    stack.pangolin.faultRequests = count;
    // Stack Manager met the fault and serves its last good document, stale
    const seen = await waitFor(async () => {
      const s = await status();
      return s.upstream.last_error_at && Date.parse(s.upstream.last_error_at) >= mark ? s : null;
    }, 7_000);
    t.true(seen.stale, `stale during ${fault}`);
    // Traefik polled that stale document, then the upstream is back
    await traefikPolls(2);
    await waitFor(async () => !(await status()).stale, 7_000);
    log.push(`${fault}: ${Date.now() - mark} ms, ${seen.upstream.last_error}`);
  }

  // `{}`: an empty answer after a non-empty one is used only after discovery.empty_confirmations (3)
  // empty syncs in a row; two of them change nothing
  const mark = Date.now();
  stack.pangolin.fault = 'empty-object';
  stack.pangolin.faultRequests = 2;
  const empty = await waitFor(async () => {
    const s = await status();
    return s.upstream.empty_streak >= 2 ? s : null;
  }, 3_000);
  await traefikPolls(2);
  await waitFor(async () => (await status()).upstream.empty_streak === 0, 3_000);
  log.push(`{}: ${Date.now() - mark} ms, empty_streak ${empty.upstream.empty_streak}`);

  await traefikPolls(1);
  const answers = await loop.stop();
  const web = answers.filter((a) => a.entryPoint === 'web').length;
  t.log(
    `${answers.length} requests over ${answers.at(-1)?.at} ms (${web} on web, ${redirect.status}); ${log.join('; ')}`,
  );
  t.deepEqual(loop.unexpected().slice(0, 10), [], tail(stack.traefik.log()));
  t.true(answers.length > 50, `${answers.length} requests`);
  t.is(await reloads(), reloadsBefore, 'the faults changed no byte Traefik got: no reload');
});

e2e('Traefik logged no error about the documents it got, through every edit and fault', (t) => {
  const errors = stack.traefik
    .log()
    .split('\n')
    .filter((line) => / ERR /.test(line));
  t.deepEqual(errors, []);
});
