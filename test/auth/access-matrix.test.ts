/** Every auth mode × route class × role through real routes (API.md §2.3 table). */
import test from 'ava';
import type { FastifyInstance } from 'fastify';
import type { Role } from '../../core/types.ts';
import { bearer, buildWithProbes, tokensByRole } from './support.ts';

type Mode = 'off' | 'ops' | 'all';
type Credential = 'none' | 'bad' | Role;

interface Probe {
  label: string;
  method: 'GET' | 'POST';
  url: string;
  /** Which modes need a token at all. */
  protectedIn: Mode[];
  /** Lowest role that passes once a token is needed. */
  minimum: Role;
  body?: () => Record<string, unknown>;
}

let created = 0;
const PROBES: Probe[] = [
  { label: 'public GET /api/health', method: 'GET', url: '/api/health', protectedIn: [], minimum: 'viewer' },
  { label: 'config GET', method: 'GET', url: '/api/test/config', protectedIn: ['all'], minimum: 'viewer' },
  {
    label: 'config POST',
    method: 'POST',
    url: '/api/test/config',
    protectedIn: ['all'],
    minimum: 'operator',
    body: () => ({}),
  },
  {
    label: 'operations GET /api/auth/whoami',
    method: 'GET',
    url: '/api/auth/whoami',
    protectedIn: ['ops', 'all'],
    minimum: 'viewer',
  },
  {
    label: 'undeclared GET (defaults to operations)',
    method: 'GET',
    url: '/api/test/undeclared',
    protectedIn: ['ops', 'all'],
    minimum: 'viewer',
  },
  {
    label: 'undeclared POST (defaults to operations)',
    method: 'POST',
    url: '/api/test/undeclared',
    protectedIn: ['ops', 'all'],
    minimum: 'operator',
    body: () => ({}),
  },
  {
    label: 'operations GET with config.role admin',
    method: 'GET',
    url: '/api/test/admin-only',
    protectedIn: ['ops', 'all'],
    minimum: 'admin',
  },
  {
    label: 'admin GET /api/auth/tokens',
    method: 'GET',
    url: '/api/auth/tokens',
    protectedIn: ['ops', 'all'],
    minimum: 'admin',
  },
  {
    label: 'admin POST /api/auth/tokens',
    method: 'POST',
    url: '/api/auth/tokens',
    protectedIn: ['ops', 'all'],
    minimum: 'admin',
    body: () => ({ name: `matrix-${++created}`, role: 'viewer' }),
  },
];

const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };
const CREDENTIALS: Credential[] = ['none', 'bad', 'viewer', 'operator', 'admin'];

function expected(probe: Probe, mode: Mode, credential: Credential): number {
  const success = probe.method === 'POST' && probe.url === '/api/auth/tokens' ? 201 : 200;
  if (!probe.protectedIn.includes(mode)) return success; // open: the header is ignored, even a bad one
  if (credential === 'none' || credential === 'bad') return 401;
  return RANK[credential] >= RANK[probe.minimum] ? success : 403;
}

async function send(app: FastifyInstance, probe: Probe, headers: Record<string, string>) {
  return app.inject({ method: probe.method, url: probe.url, headers, payload: probe.body?.() });
}

for (const mode of ['off', 'ops', 'all'] as Mode[]) {
  test(`auth.mode=${mode}: each route class answers each credential as the §2.3 table says`, async (t) => {
    // A high failure limit: this test sends many deliberate 401s from one address.
    const app = await buildWithProbes(t, { config: { auth: { mode, max_failures: 10_000 } } });
    const tokens = await tokensByRole(app);
    for (const probe of PROBES) {
      for (const credential of CREDENTIALS) {
        const headers =
          credential === 'none' ? {} : bearer(credential === 'bad' ? `smk_${'x'.repeat(43)}` : tokens[credential]);
        const response = await send(app, probe, headers);
        const want = expected(probe, mode, credential);
        t.is(response.statusCode, want, `${probe.label} with ${credential}: ${response.body}`);
        if (want === 401) {
          t.is(response.json().id, 'auth_failed');
          t.is(response.headers['www-authenticate'], 'Bearer realm="stack-manager"');
        }
        if (want === 403) t.is(response.json().id, 'forbidden');
      }
    }
  });
}

test('whoami on an open route answers {name: null, role: admin} and ignores the header', async (t) => {
  const app = await buildWithProbes(t, { config: { auth: { mode: 'off' } } });
  const response = await app.inject({ url: '/api/auth/whoami', headers: bearer('garbage') });
  t.is(response.statusCode, 200);
  t.deepEqual(response.json(), { name: null, role: 'admin', auth_mode: 'off' });
});

test('whoami with a token names the token and its role', async (t) => {
  const app = await buildWithProbes(t, { config: { auth: { mode: 'ops' } } });
  const tokens = await tokensByRole(app);
  const response = await app.inject({ url: '/api/auth/whoami', headers: bearer(tokens.operator) });
  t.deepEqual(response.json(), { name: 'test-operator', role: 'operator', auth_mode: 'ops' });
});

test('HEAD works like GET for a viewer; unknown routes answer 404 without a token', async (t) => {
  const app = await buildWithProbes(t, { config: { auth: { mode: 'all' } } });
  const tokens = await tokensByRole(app);
  t.is((await app.inject({ method: 'HEAD', url: '/api/test/config', headers: bearer(tokens.viewer) })).statusCode, 200);
  t.is((await app.inject({ method: 'HEAD', url: '/api/test/config' })).statusCode, 401);
  const unknown = await app.inject({ url: '/api/does-not-exist' });
  t.is(unknown.statusCode, 404);
  t.is(unknown.json().id, 'not_found');
});
