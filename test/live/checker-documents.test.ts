/**
 * Which of our documents an instance may run (API.md §4.19): ages count from when a document stopped
 * being the latest, and an instance's document is recognised by its routers and by the names of its
 * middlewares and services, so a refused document that changes no router is not taken.
 */
import test from 'ava';
import { GRAFANA, liveHarness, newGeneration } from './checker-support.ts';
import { manualClock } from '../proxy/support.ts';
import { waitFor } from '../helpers/wait.ts';

test('a document generated long ago and replaced a moment ago is still accepted: live and current, not outdated/behind', async (t) => {
  const clock = manualClock();
  const h = await liveHarness(t, { settle_s: 5, now: clock.now });
  h.follow();
  await h.until(async () => (await h.live(GRAFANA.id)).state === 'live');
  // the document Traefik runs was generated a minute ago (far beyond settle×3 = 15 s)
  clock.advance(60_000);
  await h.until(async () => (await h.live(GRAFANA.id)).state === 'live');
  await newGeneration(t, h);

  // replaced a moment ago: Traefik has not polled yet, nothing is wrong
  clock.advance(1000);
  const settling = await h.until(async () => {
    const value = await h.diagnosis();
    return value.checked_at !== null && Date.parse(value.checked_at) === clock.now().getTime() ? value : null;
  });
  t.like(settling.instances[0], { document: 'current' });
  t.false(
    settling.findings.some((f) => f.kind === 'document_behind'),
    JSON.stringify(settling.findings),
  );
  t.is((await h.live(GRAFANA.id)).state, 'live');

  // past the settle time: outdated, still current (superseded 6 s ago, less than settle×3)
  clock.advance(5000);
  await h.until(async () => (await h.live(GRAFANA.id)).state === 'outdated');
  t.is((await h.diagnosis()).instances[0].document, 'current');
  // superseded more than settle×3 ago: behind
  clock.advance(10_000);
  const behind = await h.until(async () => {
    const value = await h.diagnosis();
    return value.instances[0].document === 'behind' ? value : null;
  });
  t.true(behind.findings.some((f) => f.kind === 'document_behind'));
});

/** Waits for a check at the clock's time and answers its diagnosis. */
async function checkedNow(h: Awaited<ReturnType<typeof liveHarness>>, clock: ReturnType<typeof manualClock>) {
  return h.until(async () => {
    const value = await h.diagnosis();
    return value.checked_at !== null && Date.parse(value.checked_at) === clock.now().getTime() ? value : null;
  });
}

async function generation(h: Awaited<ReturnType<typeof liveHarness>>, change: () => Promise<void>): Promise<void> {
  const before = h.app.proxyConfig.current()!.json.etag;
  await change();
  await waitFor(() => h.app.proxyConfig.current()!.json.etag !== before, 5000);
}

test('a refused document that changes no router is not taken: behind, and document_behind names its new middleware', async (t) => {
  const clock = manualClock();
  const h = await liveHarness(t, { settle_s: 5, now: clock.now });
  h.follow();
  await h.until(async () => (await h.live(GRAFANA.id)).state === 'live');
  // a new middleware, assigned to nothing: every router stays as it was; Traefik refuses the document
  await generation(h, async () => {
    const created = await h.app.inject({
      method: 'POST',
      url: '/api/middlewares',
      payload: { id: 'retry-37', name: 'Retry with timeout', type: 'retry', config: { attempts: 2, timeout: '5s' } },
    });
    t.is(created.statusCode, 201, created.body);
  });
  t.truthy((h.app.proxyConfig.current()!.served.http as any).middlewares['retry-37']);
  // superseded more than settle×3 ago: Traefik's routers are those of the latest document, its middlewares are not
  clock.advance(16_000);
  const behind = await checkedNow(h, clock);
  t.is(behind.instances[0].document, 'behind');
  const finding = behind.findings.find((f) => f.kind === 'document_behind');
  t.truthy(finding, JSON.stringify(behind.findings));
  t.true(
    finding!.message.includes('Keys new since the last document it took: http.middlewares.retry-37.'),
    finding!.message,
  );
  t.true(finding!.message.includes('The Traefik instance `traefik` has not taken'), finding!.message);
  // the resources themselves run as emitted
  t.is((await h.live(GRAFANA.id)).state, 'live');
  // Traefik takes it: current again
  h.follow();
  clock.advance(1000);
  t.is((await checkedNow(h, clock)).instances[0].document, 'current');
});

test('documents that look alike to Traefik: the one the instance was seen running stays taken, so a later document_behind names the refused key', async (t) => {
  const clock = manualClock();
  const h = await liveHarness(t, { settle_s: 5, now: clock.now });
  await generation(h, async () => {
    const created = await h.app.inject({
      method: 'POST',
      url: '/api/middlewares',
      payload: { id: 'retry-37', name: 'Retry', type: 'retry', config: { attempts: 2 } },
    });
    t.is(created.statusCode, 201, created.body);
  });
  h.follow();
  clock.advance(1000);
  t.is((await checkedNow(h, clock)).instances[0].document, 'current');
  // the middleware gains a key Traefik refuses: the same names, the same routers (Traefik not following)
  await generation(h, async () => {
    const put = await h.app.inject({
      method: 'PUT',
      url: '/api/middlewares/retry-37',
      payload: { name: 'Retry', type: 'retry', config: { attempts: 2, timeout: '5s' } },
    });
    t.is(put.statusCode, 200, put.body);
  });
  clock.advance(1000);
  t.is((await checkedNow(h, clock)).instances[0].document, 'current');
  // then a router change; once superseded long enough the instance is behind
  await generation(h, async () => {
    const put = await h.app.inject({
      method: 'PUT',
      url: `/api/resources/${GRAFANA.id}/config/priority`,
      payload: { priority: 500 },
    });
    t.is(put.statusCode, 200, put.body);
  });
  clock.advance(16_000);
  const behind = await checkedNow(h, clock);
  t.is(behind.instances[0].document, 'behind');
  const finding = behind.findings.find((f) => f.kind === 'document_behind');
  t.truthy(finding, JSON.stringify(behind.findings));
  t.true(finding!.message.includes('http.middlewares.retry-37.retry.timeout'), finding!.message);
  t.deepEqual(finding!.resources, [GRAFANA.id]);
});
