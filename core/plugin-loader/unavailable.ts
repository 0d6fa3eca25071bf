/** The 503 `plugin_unavailable` answer for every method and sub-path of a plugin that did not load (API.md §2.4, §6). */
import type { FastifyInstance } from 'fastify';
import { errors } from '../errors/app-error.ts';
import type { LoaderRecord } from './plan.ts';

const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'];

/** Mounts `<prefix>` and `<prefix>/*`; returns false when a route there already exists (then it is logged). */
export function mountUnavailable(app: FastifyInstance, record: LoaderRecord): boolean {
  // The reason stays in GET /api/system/plugins: error texts may carry internal paths (API.md §2.4).
  const reason =
    record.status === 'incompatible' ? 'it is incompatible with this host API version' : 'it failed to load';
  const handler = async () => {
    throw errors.pluginUnavailable(record.name, `${reason}; see GET /api/system/plugins`);
  };
  try {
    for (const url of [record.prefix, `${record.prefix}/*`]) {
      // Same class as the plugin's own routes would have had; hidden from the OpenAPI document.
      app.route({ method: ALL_METHODS, url, config: { auth: 'operations' }, schema: { hide: true }, handler });
    }
    return true;
  } catch (err) {
    // Only possible when a half-registered plugin already took these paths.
    app.log.error({ err, plugin: record.name, prefix: record.prefix }, 'could not mount the plugin_unavailable routes');
    return false;
  }
}
