/** Types shared by core and the groups it hosts: route access classes, group registration. */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { AppConfig } from './config/schema.ts';
import type { YamlStore } from './store/types.ts';
import type { Cluster } from './cluster/standalone.ts';
import type { DataDirLockSignal } from './data-dir-lock.ts';
import type { FastRoutes } from './fast-routes.ts';

/**
 * Route access classes of API.md §2.3: `public` (P), `provider` (P + provider.token),
 * `config` (C), `operations` (O), `admin` (A). Routes declare one in `config.auth`.
 */
export type AccessClass = 'public' | 'provider' | 'config' | 'operations' | 'admin';
export type Role = 'viewer' | 'operator' | 'admin';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AccessClass;
    /** Minimum role regardless of method (third-party plugins may ask for `admin`). */
    role?: Role;
    /** false: writes to this route are checks, not changes, and are not audited (forwardAuth targets). */
    audit?: boolean;
    /**
     * false: the route answers whatever API version `Accept` asks for. For routes called on behalf
     * of someone else's client (forwardAuth passes the client's `Accept` on).
     */
    versioned?: boolean;
    /**
     * An EventSource route (browsers cannot set headers there): takes the token from
     * `?access_token=` too, and identifies a presented token even where the class needs none, so the
     * route can tell what the caller may see.
     */
    streaming?: boolean;
    /** false: not offered in 405 `Allow` lookups (catch-all routes such as the UI's `/*`). */
    methodHint?: boolean;
  }
  interface FastifyInstance {
    config: AppConfig;
    store: YamlStore;
    /** Wall clock, injectable for tests. */
    now: () => Date;
    /** Cluster membership: `isLeader()` gates the singleton work (always true on a standalone server). */
    cluster: Cluster;
    /** The data dir lock's loss, for groups that tell of it (server.ts raises it). */
    dataDirLock: DataDirLockSignal;
    /** Set by the hot-reload host before it closes a replaced instance: close WebSockets with 1012. */
    lifecycle: Lifecycle;
    /** GET routes the server answers before Fastify when their whole behaviour is known (issue 11). */
    fastRoutes: FastRoutes;
  }
  interface FastifyRequest {
    /** The authenticated token, or null when the route is open. */
    principal: { name: string | null; role: Role } | null;
  }
}

/** Instance lifecycle flags the hot-reload host sets (core/app-host.ts). */
export interface Lifecycle {
  /** Set before a replaced instance closes: close WebSockets with 1012. */
  restarting: boolean;
  /**
   * Called when the instance stops taking new requests (replaced, or shut down), before its
   * in-flight requests are awaited: endless responses (SSE streams) end here, so the drain does
   * not wait on them. Also run by the `preClose` hook of app.close().
   */
  retiring: Set<() => void>;
}

/** A built-in endpoint group: `plugins/<name>/index.ts` default-exports one. */
export interface BuiltinGroup {
  name: string;
  plugin: FastifyPluginAsync<GroupOptions>;
}

/** Options every built-in group receives. */
export interface GroupOptions {
  config: AppConfig;
}

export type App = FastifyInstance;

/** Runs (once) the `retiring` listeners of an instance. */
export function retire(lifecycle: Lifecycle): void {
  const listeners = [...lifecycle.retiring];
  lifecycle.retiring.clear();
  for (const listener of listeners) listener();
}
