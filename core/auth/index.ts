/** Authentication and authorisation (API.md §2.3): tokens, the root onRequest check and the `app.auth` service. */
import path from 'node:path';
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { AccessClass, Role } from '../types.ts';
import { authenticate, needsToken, type AuthMode } from './authenticate.ts';
import { FailureLimiter } from './rate-limit.ts';
import { createInitialAdmin, TokenStore, type TokenInfo } from './token-store.ts';

export type { TokenInfo } from './token-store.ts';
export type { AuthMode, Principal } from './authenticate.ts';
export { OPEN_PRINCIPAL } from './authenticate.ts';

/** What other code may do with tokens; the clear token exists only in the result of `create`. */
export interface AuthService {
  readonly mode: AuthMode;
  /** All tokens sorted by name, without hashes. */
  list(): TokenInfo[];
  /** Creates a token, or 'exists' when the name is taken. */
  create(name: string, role: Role, expiresInDays?: number): Promise<{ token: string; info: TokenInfo } | 'exists'>;
  /** Deletes a token; refuses the last usable admin token. */
  remove(name: string): Promise<'deleted' | 'not_found' | 'last_admin'>;
  /** The token's entry when it is valid and not expired. */
  verify(token: string): TokenInfo | undefined;
  /** Routes registered so far that answer without a token in this mode (HEAD and OPTIONS left out). */
  openRoutes(): OpenRoute[];
}

export interface OpenRoute {
  method: string;
  url: string;
  access: AccessClass;
}

declare module 'fastify' {
  interface FastifyInstance {
    auth: AuthService;
  }
}

/** Registers the token store, creates the first admin token if needed and checks every request at the root. */
async function auth(app: FastifyInstance): Promise<void> {
  const { mode, max_failures, failure_window_s } = app.config.auth;
  app.decorateRequest('principal', null);
  const tokens = await TokenStore.open(app.store, () => app.now(), app.log);
  app.addHook('onClose', async () => tokens.close());

  if (mode !== 'off') {
    const created = await createInitialAdmin(tokens, app.store);
    // The path only: the token itself must never reach a log.
    if (created)
      app.log.warn(
        { file: path.join(app.store.dataDir, created) },
        'created the initial admin token; read it from this file, then delete the file',
      );
  }

  // every route registered after this plugin (all groups and third-party plugins) is recorded
  const routes: OpenRoute[] = [];
  app.addHook('onRoute', (route) => {
    const access = route.config?.auth ?? 'operations';
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD' && method !== 'OPTIONS') routes.push({ method, url: route.url ?? route.path, access });
    }
  });

  app.decorate('auth', {
    mode,
    list: () => tokens.list(),
    create: (name, role, expiresInDays) => tokens.create(name, role, expiresInDays),
    remove: (name) => tokens.remove(name),
    verify: (token) => tokens.verify(token),
    openRoutes: () => routes.filter((route) => !needsToken(route.access, mode, app.config.provider.token)),
  } satisfies AuthService);

  const limiter = new FailureLimiter(max_failures, failure_window_s * 1000, () => app.now().getTime());
  // Added by an fp plugin, so at the root: it covers every route, the 404 handler and third-party plugins.
  const check = authenticate({
    mode,
    providerToken: app.config.provider.token,
    verify: (token) => tokens.verify(token),
    touch: (token) => tokens.touch(token),
    limiter,
  });
  // callback style: no promise per request
  app.addHook('onRequest', (request, _reply, done) => {
    try {
      check(request);
    } catch (err) {
      done(err as Error);
      return;
    }
    done();
  });
}

export default fp(auth, { name: 'auth', decorators: { fastify: ['config', 'store', 'now'] } });
