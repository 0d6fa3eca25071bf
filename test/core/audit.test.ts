/** The audit log (API.md §2.11): one JSON line per write request, secrets redacted, rotated by size. */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import type { FastifyInstance } from 'fastify';
import { AuditLog, redactQuery, type AuditEntry } from '../../core/audit.ts';
import { tempDir } from '../helpers/build.ts';
import { bearer, buildWithProbes, initialAdminToken } from '../auth/support.ts';

async function auditLines(app: FastifyInstance): Promise<AuditEntry[]> {
  await app.audit.flush();
  const text = await readFile(path.join(app.store.dataDir, 'audit.log'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AuditEntry);
}

test('writes are audited with actor, status, object id and request id; reads are not', async (t) => {
  const app = await buildWithProbes(t, { now: () => new Date('2030-01-01T00:00:00.000Z') });
  const admin = bearer(await initialAdminToken(app));
  await app.inject({ url: '/api/auth/tokens', headers: admin });
  await app.inject({ method: 'HEAD', url: '/api/auth/tokens', headers: admin });
  const created = await app.inject({
    method: 'POST',
    url: '/api/auth/tokens',
    remoteAddress: '192.0.2.5',
    headers: { ...admin, 'x-request-id': 'req-create' },
    payload: { name: 'ci', role: 'viewer' },
  });
  t.is(created.statusCode, 201);
  await app.inject({
    method: 'DELETE',
    url: '/api/auth/tokens/ci',
    headers: { ...admin, 'x-request-id': 'req-delete' },
  });
  await app.inject({ method: 'POST', url: '/api/auth/tokens', payload: { name: 'x', role: 'viewer' } });

  const lines = await auditLines(app);
  t.deepEqual(lines, [
    {
      ts: '2030-01-01T00:00:00.000Z',
      actor: 'initial-admin',
      ip: '192.0.2.5',
      method: 'POST',
      path: '/api/auth/tokens',
      status: 201,
      object_id: 'ci',
      request_id: 'req-create',
    },
    {
      ts: '2030-01-01T00:00:00.000Z',
      actor: 'initial-admin',
      ip: '127.0.0.1',
      method: 'DELETE',
      path: '/api/auth/tokens/ci',
      status: 204,
      object_id: 'ci',
      request_id: 'req-delete',
    },
    { ...lines[2], actor: 'anonymous', method: 'POST', path: '/api/auth/tokens', status: 401, object_id: null },
  ]);
});

test('failed and unknown writes are audited too, with :id as object_id', async (t) => {
  const app = await buildWithProbes(t, { config: { auth: { mode: 'off' } } });
  await app.inject({ method: 'POST', url: '/api/test/items/abc', payload: {} });
  await app.inject({ method: 'PUT', url: '/api/nowhere', payload: {} });
  const lines = await auditLines(app);
  t.like(lines[0], { actor: 'anonymous', method: 'POST', path: '/api/test/items/abc', status: 200, object_id: 'abc' });
  t.like(lines[1], { method: 'PUT', path: '/api/nowhere', status: 404, object_id: null });
});

test('access_token and other secret query values are redacted in the audit log', async (t) => {
  const app = await buildWithProbes(t, { config: { auth: { mode: 'off' } } });
  await app.inject({
    method: 'POST',
    url: '/api/test/config?access_token=smk_secret&keep=1&password=hunter2',
    payload: {},
  });
  const [line] = await auditLines(app);
  t.is(line.path, '/api/test/config?access_token=***&keep=1&password=***');
  t.is(redactQuery('/a?ACCESS_TOKEN=x&token=y&b=2'), '/a?ACCESS_TOKEN=***&token=***&b=2');
  t.is(redactQuery('/a/b'), '/a/b');
});

test('concurrent writes give whole, separate lines', async (t) => {
  const app = await buildWithProbes(t, { config: { auth: { mode: 'off' } } });
  await Promise.all(
    Array.from({ length: 40 }, (_, i) => app.inject({ method: 'POST', url: `/api/test/items/item-${i}`, payload: {} })),
  );
  const lines = await auditLines(app);
  t.is(lines.length, 40);
  t.deepEqual(lines.map((l) => l.object_id).sort(), Array.from({ length: 40 }, (_, i) => `item-${i}`).sort());
});

test('audit.enabled=false writes nothing', async (t) => {
  const app = await buildWithProbes(t, { config: { auth: { mode: 'off' }, audit: { enabled: false } } });
  await app.inject({ method: 'POST', url: '/api/test/config', payload: {} });
  t.deepEqual(await auditLines(app), []);
});

test('the log rotates by size and keeps five old files', async (t) => {
  const dir = await tempDir(t);
  const errors: unknown[] = [];
  const log = new AuditLog(path.join(dir, 'audit.log'), { error: (obj) => errors.push(obj) }, 400);
  const entry = (n: number): AuditEntry => ({
    ts: '2030-01-01T00:00:00.000Z',
    actor: 'a',
    ip: '::1',
    method: 'POST',
    path: '/p',
    status: 200,
    object_id: String(n),
    request_id: 'r',
  });
  for (let n = 0; n < 40; n++) log.append(entry(n));
  await log.flush();
  t.deepEqual(errors, []);
  t.deepEqual((await readdir(dir)).sort(), [
    'audit.log',
    'audit.log.1',
    'audit.log.2',
    'audit.log.3',
    'audit.log.4',
    'audit.log.5',
  ]);
  const ids = async (file: string) =>
    (await readFile(path.join(dir, file), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => Number(JSON.parse(l).object_id));
  for (const file of await readdir(dir)) t.true((await stat(path.join(dir, file))).size <= 400, file);
  const current = await ids('audit.log');
  t.is(current.at(-1), 39, 'the newest line is in audit.log');
  const older = await ids('audit.log.1');
  t.is(older.at(-1), current[0] - 1, 'audit.log.1 ends right before audit.log starts');
  const oldest = await ids('audit.log.5');
  t.true(oldest[0] > 0, 'the oldest lines were dropped');
});
