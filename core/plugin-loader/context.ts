/** Builds the `opts` a plugin's default export receives (API.md §6): config, logger, store, core views, errors, host. */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { AppError, CORE_ERROR_IDS, type ErrorDetail } from '../errors/app-error.ts';
import type { Collection } from '../store/types.ts';
import { APP_VERSION, HOST_API_VERSION } from '../version.ts';
import type { ExtPluginOptions, PluginStore, ReadOnlyView, StoreEntry } from './types.ts';

/** Store keys are file names under data/ext/<name>/: lower-case, no dots, so they never collide with temp or lock files. */
export const STORE_KEY = /^[a-z0-9][a-z0-9_-]{0,127}$/;

/**
 * Every value is stored as `{value: ...}`: plugin values may be scalars or arrays, and object values
 * could carry keys (`id`, `created_at`, `updated_at`) the store reserves for itself.
 */
const StoredValue = Type.Object({ value: Type.Unknown() });
type Wrapped = { value: unknown };

/** Opens the plugin's collection `ext/<name>` (files data/ext/<name>/<key>.yaml). */
export async function openPluginStore(app: FastifyInstance, name: string): Promise<PluginStore> {
  const collection: Collection<Wrapped> = await app.store.collection<Wrapped>({
    name: `ext/${name}`,
    schema: StoredValue,
    idPattern: STORE_KEY,
  });
  // Copies in and out: a plugin mutating a value must not change what the store holds in memory.
  const entry = (o: { id: string; data: Wrapped; created_at: string; updated_at: string }): StoreEntry => ({
    key: o.id,
    value: structuredClone(o.data.value),
    created_at: o.created_at,
    updated_at: o.updated_at,
  });
  return Object.freeze({
    get: async (key: string) => structuredClone(collection.get(key)?.data.value),
    list: async () => collection.list().map(entry),
    put: async (key: string, value: unknown) => {
      if (value === undefined) throw new TypeError('store.put: value must not be undefined (use delete)');
      // JSON round trip: what YAML cannot hold faithfully (functions, class instances, Dates) becomes plain data now, not on re-read.
      return entry(await collection.put(key, { value: JSON.parse(JSON.stringify(value)) }));
    },
    delete: async (key: string) => collection.delete(key),
  });
}

/** A read-only view over a core decorator such as `app.middlewaresView`; empty until that decorator exists. */
function coreView(app: FastifyInstance, decorator: string): ReadOnlyView {
  const source = (): Partial<ReadOnlyView> | undefined =>
    app.hasDecorator(decorator)
      ? (app as unknown as Record<string, Partial<ReadOnlyView> | undefined>)[decorator]
      : undefined;
  return Object.freeze({
    list: () => {
      const view = source();
      return typeof view?.list === 'function' ? structuredClone(view.list()) : [];
    },
    get: (id: string) => {
      const view = source();
      return typeof view?.get === 'function' ? structuredClone(view.get(id)) : undefined;
    },
  });
}

/** `errors.create(status, id, message, details)`: an AppError whose id carries the plugin's prefix. */
function pluginErrors(name: string): ExtPluginOptions['errors'] {
  return Object.freeze({
    create(status: number, id: string, message: string, details?: ErrorDetail[]): Error {
      if (!Number.isInteger(status) || status < 400 || status > 599)
        throw new TypeError(`errors.create: status must be an integer 400-599, got ${status}`);
      if (typeof id !== 'string' || !/^[a-z0-9][a-z0-9_.-]*$/.test(id))
        throw new TypeError(`errors.create: id must be a lower-case identifier, got ${String(id)}`);
      return new AppError(status, `${name}.${id}`, String(message), details);
    },
    catalogue: CORE_ERROR_IDS,
  });
}

export interface PluginContextInput {
  name: string;
  config: Record<string, unknown>;
  store: PluginStore;
}

/** The full `opts` object; a fresh one per registration, since Fastify may add keys to the options it is given. */
export function pluginOptions(app: FastifyInstance, input: PluginContextInput): ExtPluginOptions {
  return {
    config: structuredClone(input.config),
    logger: app.log.child({ plugin: input.name }),
    store: input.store,
    core: {
      middlewares: coreView(app, 'middlewaresView'),
      services: coreView(app, 'servicesView'),
      resources: coreView(app, 'resourcesView'),
    },
    errors: pluginErrors(input.name),
    host: Object.freeze({ api_version: HOST_API_VERSION, app_version: APP_VERSION, data_dir: app.store.dataDir }),
  };
}
