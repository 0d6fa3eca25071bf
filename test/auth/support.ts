/** Shared pieces of the auth tests: a test-only group with one route per access class, tokens per role, log capture. */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import fp from 'fastify-plugin';
import type { ExecutionContext } from 'ava';
import type { FastifyInstance } from 'fastify';
import type { BuiltinGroup, Role } from '../../core/types.ts';
import { builtinGroups } from '../../plugins/index.ts';
import { build, type BuildTestOptions } from '../helpers/build.ts';

/** Routes the built-in groups do not offer yet: class C (GET/POST), provider, an undeclared class, `config.role`. */
export const probeGroup: BuiltinGroup = {
  name: 'auth-probe',
  plugin: fp(
    async (app: FastifyInstance) => {
      const ok = async () => ({ ok: true });
      app.get('/api/test/config', { config: { auth: 'config' } }, ok);
      app.post('/api/test/config', { config: { auth: 'config' } }, ok);
      app.get('/api/test/provider', { config: { auth: 'provider' } }, ok);
      app.get('/api/test/undeclared', ok);
      app.post('/api/test/undeclared', ok);
      app.get('/api/test/admin-only', { config: { auth: 'operations', role: 'admin' } }, ok);
      app.post('/api/test/items/:id', { config: { auth: 'config' } }, ok);
    },
    { name: 'auth-probe', encapsulate: true, dependencies: ['auth'] },
  ),
};

export const ROLES: Role[] = ['viewer', 'operator', 'admin'];

/** Builds the app with the built-in groups plus the probe routes. */
export async function buildWithProbes(t: ExecutionContext, options: BuildTestOptions = {}): Promise<FastifyInstance> {
  return build(t, { ...options, groups: [...builtinGroups, probeGroup] });
}

/** Creates one token per role through the service and returns them by role. */
export async function tokensByRole(app: FastifyInstance): Promise<Record<Role, string>> {
  const tokens = {} as Record<Role, string>;
  for (const role of ROLES) {
    const created = await app.auth.create(`test-${role}`, role);
    if (created === 'exists') throw new Error(`token test-${role} exists`);
    tokens[role] = created.token;
  }
  return tokens;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The clear initial admin token the app wrote on first start. */
export async function initialAdminToken(app: FastifyInstance): Promise<string> {
  return (await readFile(path.join(app.store.dataDir, 'auth', 'initial-admin-token'), 'utf8')).trim();
}

/** A pino destination that keeps every line, for assertions on what was (not) logged. */
export function logCapture(): { stream: Writable; text: () => string; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  const text = () => chunks.join('');
  return {
    stream,
    text,
    lines: () =>
      text()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}
