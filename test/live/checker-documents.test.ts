/**
 * Which of our documents an instance may run (API.md §4.19): ages count from when a document stopped
 * being the latest, and an instance's document is recognised by its routers and by the names of its
 * middlewares and services, so a refused document that changes no router is not taken.
 */
import test from 'ava';
import { GRAFANA, liveHarness } from './checker-support.ts';
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
  const before = h.app.proxyConfig.current()!.json.etag;
  const put = await h.app.inject({
    method: 'PUT',
    url: `/api/resources/${GRAFANA.id}/config/priority`,
    payload: { priority: 500 },
  });
  t.is(put.statusCode, 200, put.body);
  await waitFor(() => h.app.proxyConfig.current()!.json.etag !== before, 5000);

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
