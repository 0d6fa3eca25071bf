/** Helpers of the history tests: an app with history on, listening on 127.0.0.1, tokens, git, HTTP calls. */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ExecutionContext } from 'ava';
import type { FastifyInstance } from 'fastify';
import { stringify } from 'yaml';
import { build, tempDir, type BuildTestOptions } from '../helpers/build.ts';
import type { FakeUpstream } from '../helpers/fake-upstream.ts';

const run = promisify(execFile);

/** git on PATH (Debian's `git`): the history tests skip without it. */
export const hasGit = (process.env.PATH ?? '').split(':').some((dir) => existsSync(path.join(dir, 'git')));

export interface HistoryHarness {
  app: FastifyInstance;
  base: string;
  dataDir: string;
  tokens: { operator: string; viewer: string };
  /** Runs git against data/.history; stdout. */
  git: (...args: string[]) => Promise<string>;
  call: (
    method: string,
    url: string,
    options?: { token?: string | null; body?: unknown },
  ) => Promise<{ status: number; headers: Headers; body: any }>;
}

/** datasources.yaml pointing at a fake upstream (the discovery tests), written before the app starts. */
export async function writeSources(dataDir: string, fake: FakeUpstream): Promise<void> {
  const entry = (type: string, url: string) => ({
    type,
    url,
    skip_tls_verify: false,
    basic_auth: null,
    poll_interval_s: 3600,
    timeout_ms: 60_000,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
  });
  await mkdir(dataDir, { recursive: true });
  await writeFile(
    path.join(dataDir, 'datasources.yaml'),
    stringify({
      active: 'pangolin',
      sources: { pangolin: entry('pangolin', fake.pangolinUrl), traefik: entry('traefik', fake.url) },
    }),
    { mode: 0o600 },
  );
}

export async function startHistory(
  t: ExecutionContext,
  options: {
    config?: Record<string, unknown>;
    history?: Record<string, unknown>;
    dataDir?: string;
    groups?: BuildTestOptions['groups'];
  } = {},
): Promise<HistoryHarness> {
  const dataDir = options.dataDir ?? path.join(await tempDir(t, 'sm-history-'), 'data');
  const app = await build(t, {
    dataDir,
    groups: options.groups,
    config: {
      auth: { mode: 'all' },
      history: { enabled: true, batch_ms: 1000, max_commits: 20000, ...options.history },
      ...options.config,
    },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const operator = await app.auth.create('ops-alice', 'operator');
  const viewer = await app.auth.create('viewer-bob', 'viewer');
  if (operator === 'exists' || viewer === 'exists') throw new Error('tokens exist');
  const gitDir = path.join(dataDir, '.history');
  const harness: HistoryHarness = {
    app,
    base,
    dataDir,
    tokens: { operator: operator.token, viewer: viewer.token },
    git: async (...args) =>
      (await run('git', args, { env: { ...process.env, GIT_DIR: gitDir }, maxBuffer: 64 * 1024 * 1024 })).stdout,
    call: async (method, url, { token, body } = {}) => {
      const bearer = token === undefined ? operator.token : token;
      const response = await fetch(`${base}${url}`, {
        method,
        headers: {
          ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
    },
  };
  return harness;
}

/** The commits of the history, newest first, as the API lists them. */
export async function commits(h: HistoryHarness, query = ''): Promise<any[]> {
  await h.app.history.idle();
  const listed = await h.call('GET', `/api/history${query}`);
  if (listed.status !== 200)
    throw new Error(`GET /api/history${query}: ${listed.status} ${JSON.stringify(listed.body)}`);
  return listed.body;
}

export const rateLimit = (name: string, average = 100) => ({ name, type: 'rateLimit', config: { average, burst: 50 } });
