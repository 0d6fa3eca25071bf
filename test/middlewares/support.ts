/** Helpers shared by the middlewares, services and templates tests. */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { build, type BuildTestOptions } from '../helpers/build.ts';

/** An app with auth off and, unless asked, no templates (so lists start empty). */
export function buildApp(
  t: ExecutionContext,
  options: BuildTestOptions & { seed?: boolean; config?: Record<string, unknown> } = {},
): Promise<FastifyInstance> {
  const { seed = false, config = {}, ...rest } = options;
  return build(t, { ...rest, config: { auth: { mode: 'off' }, templates: { seed }, ...config } });
}

/** Every file under the data dir with the hash of its bytes; the audit log and hidden files are left out. */
export async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (current: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(current, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.') || entry.name.startsWith('audit.log')) continue;
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) await walk(full);
      else
        out[path.relative(dir, full)] = createHash('sha256')
          .update(await readFile(full))
          .digest('hex');
    }
  };
  await walk(dir);
  return out;
}

/** Parsed JSON body plus status and headers of an injected request. */
export async function call(
  app: FastifyInstance,
  options: InjectOptions,
): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  const response = await app.inject(options);
  return {
    status: response.statusCode,
    body: response.body ? JSON.parse(response.body) : undefined,
    headers: response.headers,
  };
}

/** Asserts the standard error body `{id, message}` with a 4xx status. */
export function assertClientError(
  t: ExecutionContext,
  response: { status: number; body: any },
  status?: number,
  id?: string,
): void {
  t.true(
    response.status >= 400 && response.status < 500,
    `expected a 4xx, got ${response.status} ${JSON.stringify(response.body)}`,
  );
  if (status !== undefined) t.is(response.status, status, JSON.stringify(response.body));
  t.is(typeof response.body?.id, 'string');
  t.is(typeof response.body?.message, 'string');
  if (id !== undefined) t.is(response.body.id, id);
}

/** A reference source for tests: paths per id, and whether removeReferences was called. */
export function fakeReferences(initial: Record<string, string[]>, removable = true) {
  const refs = new Map(Object.entries(initial));
  const removed: string[] = [];
  return {
    removed,
    source: {
      referrers: (id: string) => (refs.get(id) ?? []).map((p) => ({ path: p })),
      ...(removable
        ? {
            removeReferences: async (id: string) => {
              removed.push(id);
              refs.delete(id);
            },
          }
        : {}),
    },
  };
}
