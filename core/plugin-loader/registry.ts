/** The `app.extPlugins` decorator: read-only copies of the loader's records (API.md §6, GET /api/system/plugins). */
import type { PlannedPlugin } from './plan.ts';
import type { ExtPluginRecord, ExtPluginRegistry } from './types.ts';

/** A registry over the planned plugins; records change while the app boots, so every call copies. */
export function createRegistry(plugins: PlannedPlugin[], generation: number): ExtPluginRegistry {
  return Object.freeze({
    generation,
    list: (): ExtPluginRecord[] =>
      plugins.map(({ record }) => {
        const { status, ...rest } = structuredClone(record);
        // `pending` only exists before ready(): no request can see it, but a direct caller might.
        return status === 'pending'
          ? { ...rest, status: 'failed', error: { message: 'not loaded yet', stack: null } }
          : { ...rest, status };
      }),
  });
}
