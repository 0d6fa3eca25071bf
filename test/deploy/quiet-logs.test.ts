/** One log line per request (debug for polls and health checks) and the access summary at start. */
import test from 'ava';
import pino from 'pino';
import { logAccessSummary, isLoopback } from '../../core/startup-summary.ts';
import { build } from '../helpers/build.ts';
import { logCapture } from '../auth/support.ts';
import { harness } from '../resources/support.ts';

const requestLines = (lines: Record<string, unknown>[]) =>
  lines.filter((l) => l.msg === 'request completed' || l.msg === 'incoming request');

test('provider polls and health checks log one debug line; other requests one info line', async (t) => {
  const logs = logCapture();
  // a fake Pangolin, so the provider endpoint has a configuration to serve
  const { app } = await harness(t, { logStream: logs.stream, config: { log: { level: 'debug' } } });
  await app.proxyConfig.regenerate();
  t.is((await app.inject({ url: '/api/v1/proxy-config' })).statusCode, 200);
  t.is((await app.inject({ url: '/api/health' })).statusCode, 200);
  t.is((await app.inject({ url: '/api/middlewares' })).statusCode, 200);
  t.is((await app.inject({ url: '/api/no-such-thing' })).statusCode, 404);
  const lines = requestLines(logs.lines());
  t.deepEqual(
    lines.map((l) => [l.level, (l.req as { url: string }).url, (l.res as { statusCode: number }).statusCode]),
    [
      [20, '/api/v1/proxy-config', 200],
      [20, '/api/health', 200],
      [30, '/api/middlewares', 200],
      [30, '/api/no-such-thing', 404],
    ],
  );
  t.true(lines.every((l) => typeof l.responseTime === 'number'));
});

test('at the default level info, a polling Traefik leaves no line per poll', async (t) => {
  const logs = logCapture();
  const { app } = await harness(t, { logStream: logs.stream, config: { log: { level: 'info' } } });
  await app.proxyConfig.regenerate();
  for (let i = 0; i < 5; i++) t.is((await app.inject({ url: '/api/v1/proxy-config' })).statusCode, 200);
  t.deepEqual(requestLines(logs.lines()), []);
});

async function summary(t: Parameters<typeof build>[0], config: Record<string, unknown>) {
  const logs = logCapture();
  const app = await build(t, { config });
  logAccessSummary(app, pino({ level: 'info' }, logs.stream));
  return logs.lines();
}

test('ops mode on 0.0.0.0: the summary lists the open routes by class and warns that config and provider routes are open beyond loopback', async (t) => {
  const [info, warning, ...rest] = await summary(t, { auth: { mode: 'ops' }, server: { host: '0.0.0.0' } });
  t.deepEqual(rest, []);
  t.is(info.level, 30);
  t.is(info.auth_mode, 'ops');
  t.regex(String(info.admin_token_file), /auth\/initial-admin-token$/);
  t.true(String(info.msg).includes(String(info.admin_token_file)), 'the message says where the admin token is');
  const open = info.open_routes as Record<string, string[]>;
  t.true(open.public.includes('GET /api/health'));
  t.true(open.provider.includes('GET /api/v1/proxy-config'), 'no provider token: the provider endpoint is open');
  t.true(open.config.includes('GET /api/middlewares'));
  // API.md §2.3: in ops mode configuration writes are open too, operations are not
  t.true(open.config.includes('POST /api/middlewares'));
  t.false(Object.values(open).flat().includes('POST /api/backup'), 'operations need a token in ops mode');
  t.is(warning.level, 40);
  t.regex(String(warning.msg), /not loopback/);
  t.deepEqual([...(warning.classes as string[])].sort(), ['config', 'provider']);
});

test('ops mode on loopback: no warning', async (t) => {
  const lines = await summary(t, { auth: { mode: 'ops' }, server: { host: '127.0.0.1' } });
  t.is(lines.length, 1);
  t.is(lines[0].level, 30);
});

test('all mode with a provider token: only public routes are open, no warning on 0.0.0.0', async (t) => {
  const lines = await summary(t, {
    auth: { mode: 'all' },
    provider: { token: 'p'.repeat(32) },
    server: { host: '0.0.0.0' },
  });
  t.is(lines.length, 1);
  t.deepEqual(Object.keys(lines[0].open_routes as object), ['public']);
});

test('off mode: every route is open, and the warning names AUTH_MODE', async (t) => {
  const [info, warning] = await summary(t, { auth: { mode: 'off' }, server: { host: '::' } });
  t.regex(String(info.open_routes), /^all \d+ routes$/);
  t.is(info.admin_token_file, null);
  t.regex(String(warning.msg), /AUTH_MODE=ops/);
});

test('loopback addresses', (t) => {
  t.true(['127.0.0.1', '::1', '[::1]', 'localhost', '127.0.0.53'].every(isLoopback));
  t.false(['0.0.0.0', '::', '192.0.2.1', 'stack-manager'].some(isLoopback));
});
