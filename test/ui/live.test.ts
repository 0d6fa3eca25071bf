/**
 * GitOps edits reach an open page through GET /api/events (no polling in the UI): a hand-written
 * middleware file appears in the open list (the delay is measured and logged), a bad YAML file
 * shows on the dashboard with its file and line, and disappears once fixed.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { assertClean, uiTest } from './browser.ts';

uiTest(
  'a hand edit of a YAML file appears in the open page through the event stream',
  async (t, { server, page, problems }) => {
    await page.goto(`${server.url}/middlewares`);
    await page.getByRole('heading', { level: 1, name: 'Middlewares' }).waitFor();
    // the event stream is open (the indicator's state, whether or not the layout shows it at this width)
    await page.waitForFunction(() => document.querySelector('.live')?.getAttribute('data-live') === 'live');
    // the UI must not poll: count API requests while nothing changes
    let apiRequests = 0;
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/api/middlewares')) apiRequests++;
    });
    const dir = path.join(server.dataDir, 'middlewares');
    await mkdir(dir, { recursive: true });
    const delays: number[] = [];
    for (let i = 1; i <= 5; i++) {
      const id = `hand-made-${i}`;
      const started = Date.now();
      await writeFile(path.join(dir, `${id}.yaml`), `name: Hand made ${i}\ntype: compress\nconfig: {}\n`);
      await page.locator(`tr[data-middleware="${id}"]`).waitFor({ timeout: 120_000 });
      delays.push(Date.now() - started);
    }
    const sorted = [...delays].sort((a, b) => a - b);
    t.log(
      `hand edit → visible in the open page: ${delays.join(', ')} ms (median ${sorted[2]} ms, max ${sorted[4]} ms; includes the store's 300 ms debounce)`,
    );
    t.true(apiRequests >= 5, 'each change reloaded the list');

    // a hand edit of an existing file changes the shown row too
    await writeFile(path.join(dir, 'hand-made-1.yaml'), `name: Renamed by hand\ntype: compress\nconfig: {}\n`);
    await page
      .locator('tr[data-middleware="hand-made-1"]', { hasText: 'Renamed by hand' })
      .waitFor({ timeout: 120_000 });
    // and a deletion removes it
    await rm(path.join(dir, 'hand-made-2.yaml'));
    await page.locator('tr[data-middleware="hand-made-2"]').waitFor({ state: 'detached', timeout: 120_000 });

    const before = apiRequests;
    await page.waitForTimeout(1500); // a quiet period on purpose: nothing changed, so nothing may be fetched
    t.is(apiRequests, before, 'no polling while nothing changes');
    await assertClean(t, problems, 'live middlewares list');
  },
);

uiTest(
  'a bad YAML edit shows the file and line on the dashboard, and goes away when fixed',
  async (t, { server, page, problems }) => {
    // config status answers 503 only when no config can be produced; a degraded one is 200
    await page.goto(`${server.url}/`);
    await page.locator('#provider-status').waitFor();
    const dir = path.join(server.dataDir, 'middlewares');
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, 'broken.yaml');
    await writeFile(file, 'name: Broken\ntype: compress\nconfig:\n  minResponseBodyBytes: [1, 2\n');
    const entry = page.locator('[data-invalid-file="middlewares/broken.yaml"]');
    await entry.waitFor({ timeout: 120_000 });
    const text = await entry.innerText();
    t.regex(text, /middlewares\/broken\.yaml:\d+/, text);
    t.log(`dashboard shows: ${text}`);
    await writeFile(file, 'name: Broken\ntype: compress\nconfig:\n  minResponseBodyBytes: 1024\n');
    await entry.waitFor({ state: 'detached', timeout: 120_000 });
    await assertClean(t, problems, 'dashboard invalid file');
  },
);
