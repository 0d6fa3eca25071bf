/** Types shared by core and the groups it hosts: route access classes, group registration. */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { AppConfig } from './config/schema.ts';
import type { YamlStore } from './store/types.ts';

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
  }
  interface FastifyInstance {
    config: AppConfig;
    store: YamlStore;
    /** Wall clock, injectable for tests. */
    now: () => Date;
    /** Set by the hot-reload host before it closes a replaced instance: close WebSockets with 1012. */
    lifecycle: { restarting: boolean };
  }
  interface FastifyRequest {
    /** The authenticated token, or null when the route is open. */
    principal: { name: string | null; role: Role } | null;
  }
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
