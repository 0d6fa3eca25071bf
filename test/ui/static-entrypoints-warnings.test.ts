/**
 * Entry points on the plugins screen (API.md §4.20) when the `.env` beside the compose file cannot be
 * used: the tcp-2222 row says "not published" and why (the `ports:` item with a variable, the `.env`
 * file and line), as the apply job would refuse; once `.env` is fixed, "published" and no warning.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { tempDir } from '../helpers/build.ts';
import { assertClean, uiTest } from './browser.ts';

const COMPOSE = `services:
  gerbil:
    image: fosrl/gerbil:1.0.0
    ports:
      - "80:80"
      - "\${SSH_PORT}:2222"
  traefik:
    image: traefik:v3.5
    network_mode: service:gerbil
`;

type Context = { envFile?: string; composeFile?: string };

uiTest<Context>(
  'plugins screen: a .env that cannot be used is named under "not published" for the port a variable item could publish',
  async (t, { page, server, problems }) => {
    const envFile = t.context.envFile!;
    await page.goto(`${server.url}/plugins`);
    const row = (name: string) => page.locator('[data-section="entrypoints"]').locator(`tr[data-entrypoint="${name}"]`);
    const gerbilCell = (name: string) => row(name).locator('td').nth(3);
    await gerbilCell('tcp-2222').getByText('not published').waitFor();
    const warning = gerbilCell('tcp-2222').locator('[data-warnings] li');
    t.is(
      await warning.innerText(),
      `services.gerbil.ports[1] "\${SSH_PORT}:2222" uses variables, and the .env file ${envFile}:2 cannot be used: the value of SSH_PORT has no closing "`,
    );
    t.is(await gerbilCell('web').locator('[data-warnings]').count(), 0);
    // Sync adds the entry point but writes no second 2222 mapping beside the unreadable item, and says why
    const section = page.locator('[data-section="entrypoints"]');
    await section.getByRole('button', { name: 'Sync' }).click();
    const notice = section.getByRole('status');
    await notice.waitFor();
    t.regex(
      await notice.innerText(),
      /Not synced — tcp-2222: port 2222\/tcp not published on gerbil: services\.gerbil\.ports\[1\] "\$\{SSH_PORT\}:2222" uses variables, and the \.env file .*:2 cannot be used/,
    );
    t.false((await readFile(t.context.composeFile!, 'utf8')).includes('"2222:2222"'));

    await writeFile(envFile, '# gerbil\nSSH_PORT=2222\n');
    await page.reload();
    await gerbilCell('tcp-2222').getByText('published', { exact: true }).waitFor();
    t.is(await gerbilCell('tcp-2222').locator('[data-warnings]').count(), 0);
    await assertClean(t, problems, 'plugins entry point warnings');
  },
  {
    config: async (t: ExecutionContext<Context>) => {
      const dir = await tempDir(t, 'sm-ui-env-');
      const compose = path.join(dir, 'docker-compose.yml');
      await writeFile(compose, COMPOSE);
      t.context.composeFile = compose;
      t.context.envFile = path.join(dir, '.env');
      await writeFile(t.context.envFile, '# gerbil\nSSH_PORT="2222\n');
      const staticFile = path.join(dir, 'traefik.yml');
      await writeFile(staticFile, 'entryPoints:\n  web:\n    address: ":80"\n');
      return { stack: { compose_file: compose }, proxy: { static_config_path: staticFile } };
    },
  },
);
