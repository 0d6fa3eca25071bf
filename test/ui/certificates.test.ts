/**
 * The Certificates screen (issue 28): every certificate of acme.json soonest first with days left,
 * coloured by the 14/3/0-day thresholds; live — a `certificate` event (a threshold reached by a
 * server-side check) reloads it without a click; Refresh checks the sources now.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { assertClean, uiTest } from './browser.ts';
import { tempDir } from '../helpers/build.ts';
import { acmeJson, makeCertificate, type TestCertificate } from '../helpers/certificates.ts';

const DAY_MS = 86_400_000;
const now = Date.now();
const inDays = (cn: string, days: number) => makeCertificate(cn, new Date(now + days * DAY_MS + 3_600_000));
let acmePath = '';
const write = (certificates: TestCertificate[]) => writeFile(acmePath, acmeJson(certificates), { mode: 0o600 });

const far = inDays('far.example.test', 40);
const near = inDays('near.example.test', 10);
const urgent = inDays('urgent.example.test', 2);

uiTest(
  'certificates listed soonest first with days left and threshold colours; a certificate event reloads the list; Refresh checks now',
  async (t, { server, page, problems }) => {
    await page.goto(`${server.url}/certificates`);
    await page.getByRole('heading', { level: 1, name: 'Certificates' }).waitFor();
    const rows = page.locator('tr[data-certificate]');
    await page.locator('tr[data-certificate="far.example.test"]').waitFor();
    t.deepEqual(
      await rows.evaluateAll((trs) =>
        trs.map((tr) => [tr.getAttribute('data-certificate'), tr.getAttribute('data-tone')]),
      ),
      [
        ['urgent.example.test', 'bad'],
        ['near.example.test', 'warn'],
        ['far.example.test', 'ok'],
      ],
    );
    t.regex(
      await page.locator('tr[data-certificate="urgent.example.test"]').innerText(),
      /2 days[\s\S]*acme\.json \(letsencrypt\)/,
    );
    t.regex(await page.locator('tr[data-certificate="near.example.test"]').innerText(), /10 days/);
    t.regex(await page.locator('#certificates-checked').innerText(), /Checked .*acme\.json .*acme\.json\s+ok/s);

    // live: a certificate 1 day from expiry appears; the server's own check publishes the
    // `certificate` event (threshold 3) and the screen reloads without a click
    const expiring = inDays('expiring.example.test', 1);
    await write([far, near, urgent, expiring]);
    await server.app.certificates.check();
    await page.locator('tr[data-certificate="expiring.example.test"][data-tone="bad"]').waitFor();
    t.is(await rows.first().getAttribute('data-certificate'), 'expiring.example.test');

    // Refresh: a certificate far from expiry (no event) shows after the button checks the file again
    const renewed = inDays('renewed.example.test', 80);
    await write([far, near, urgent, expiring, renewed]);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.locator('tr[data-certificate="renewed.example.test"][data-tone="ok"]').waitFor();
    t.is(await rows.count(), 5);
    await assertClean(t, problems, 'certificates');
  },
  {
    config: async (t) => {
      acmePath = path.join(await tempDir(t), 'acme.json');
      await write([far, near, urgent]);
      return { proxy: { acme_path: acmePath }, certs: { check_interval_s: 3600 } };
    },
  },
);
