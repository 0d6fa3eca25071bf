/**
 * Validation messages (API.md §2.1): the field, what was received, what is allowed (or the closest
 * allowed value for a typo); a failed union reports its best branch only. The same formatter
 * explains request bodies, settings at startup and hand-edited data files.
 */
import test from 'ava';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig, ConfigError } from '../../core/config/load.ts';
import { build, tempDir } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';

const open = { auth: { mode: 'off' } };

test('an unknown middleware type: one detail naming the closest type and what was received', async (t) => {
  const app = await build(t, { config: open });
  const res = await app.inject({
    method: 'POST',
    url: '/api/middlewares',
    payload: { name: 'x', type: 'rateLimt', config: {} },
  });
  t.is(res.statusCode, 422);
  const body = res.json();
  t.is(body.details.length, 1, JSON.stringify(body.details));
  t.is(body.details[0].path, '/type');
  t.regex(
    body.message,
    /^type must be one of: .*rateLimit.* \(received string "rateLimt"; did you mean "rateLimit"\?\)$/,
  );
  const far = (
    await app.inject({
      method: 'POST',
      url: '/api/middlewares',
      payload: { name: 'x', type: 'zzzzzzzzzz', config: {} },
    })
  ).json();
  t.notRegex(far.message, /did you mean/, 'no suggestion without an obvious typo');
});

test('a nullable integer given a word: "must be integer or null", not "must be null"', async (t) => {
  const app = await build(t, { config: open });
  const res = await app.inject({
    method: 'PUT',
    url: '/api/mtls/middleware/config',
    payload: { rules: [], reject_code: 'high' },
  });
  t.is(res.statusCode, 422);
  const body = res.json();
  t.deepEqual(body.details, [{ path: '/reject_code', message: 'must be integer or null (received string "high")' }]);
  t.is(body.message, 'reject_code must be integer or null (received string "high")');
});

test('a union whose value has the right kind reports that branch only', async (t) => {
  const app = await build(t, { config: open });
  const res = await app.inject({
    method: 'PUT',
    url: '/api/mtls/middleware/config',
    payload: { rules: [], refresh_interval: '5 minutes' },
  });
  t.is(res.statusCode, 422);
  const body = res.json();
  t.is(body.details.length, 1, JSON.stringify(body.details));
  t.is(body.details[0].path, '/refresh_interval');
  t.is(
    body.details[0].message,
    'must be a Go duration such as "300s" or "1m30s", at most 2562047h47m16.854775807s (received string "5 minutes")',
  );
});

test('type errors and ranges say what was received', async (t) => {
  const app = await build(t, { config: open });
  const tokens = (
    await app.inject({
      method: 'POST',
      url: '/api/auth/tokens',
      payload: { name: 't', role: 'viewer', expires_in_days: '30' },
    })
  ).json();
  t.deepEqual(tokens.details, [{ path: '/expires_in_days', message: 'must be integer (received string "30")' }]);
  const role = (
    await app.inject({ method: 'POST', url: '/api/auth/tokens', payload: { name: 't', role: 'admn' } })
  ).json();
  t.regex(
    role.message,
    /^role must be one of: viewer, operator, admin \(received string "admn"; did you mean "admin"\?\)$/,
  );
  const page = (await app.inject({ url: '/api/middlewares?page=0' })).json();
  t.deepEqual(page.details, [{ path: '/query/page', message: 'must be >= 1 (received number 0)' }]);
});

test('a bad AUTH_MODE at startup names the allowed values and the closest one', (t) => {
  const noLocal = { CONFIG_FILE: path.join(import.meta.dirname, '..', 'helpers', 'empty.yaml') };
  const typo = t.throws(() => loadConfig({ env: { ...noLocal, AUTH_MODE: 'of' } }), { instanceOf: ConfigError });
  t.is(
    typo!.message,
    'invalid setting auth.mode: must be one of: off, ops, all (received string "of"; did you mean "off"?)',
  );
  const other = t.throws(() => loadConfig({ env: { ...noLocal, AUTH_MODE: 'sometimes' } }), {
    instanceOf: ConfigError,
  });
  t.is(other!.message, 'invalid setting auth.mode: must be one of: off, ops, all (received string "sometimes")');
});

test('a hand-edited file with a typo in its type is reported with the closest type', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  await mkdir(path.join(dataDir, 'middlewares'), { recursive: true });
  await writeFile(
    path.join(dataDir, 'middlewares', 'limit.yaml'),
    'name: Limit\ntype: rateLimt\nconfig:\n  average: 10\n',
  );
  const app = await build(t, { dataDir, config: open });
  const file = await waitFor(() => app.store.invalidFiles().find((f) => f.path.endsWith('limit.yaml')), 5000);
  t.is(file.line, 2);
  t.regex(file.message, /^type: must be one of: .* \(received string "rateLimt"; did you mean "rateLimit"\?\)$/);
});
