/**
 * Plugin status from Traefik's runtime view (API.md §4.6): `loaded` when an HTTP middleware of the
 * plugin's type is enabled, `error` (with its text) when one is in error, else `configured` — also
 * when Traefik cannot be read (no source, unreachable): the static config alone is then all we know.
 */
import type { ProxyExplorer } from '../proxy/index.ts';

export type PluginStatus = 'configured' | 'loaded' | 'error';

export interface StatusOf {
  status: PluginStatus;
  error: string | null;
}

const CONFIGURED: StatusOf = { status: 'configured', error: null };

/** Error text of a Traefik middleware (`error` is an array of strings in the API). */
function errorText(item: Record<string, unknown>): string | null {
  const { error } = item;
  if (Array.isArray(error) && error.length > 0) return error.map(String).join('; ');
  if (typeof error === 'string' && error) return error;
  return item.status === 'disabled' ? 'middleware disabled by Traefik' : null;
}

/** A lookup key → status; reads Traefik's HTTP middlewares once (the explorer caches 1 s). */
export async function pluginStatuses(
  explorer: ProxyExplorer,
  log: { debug(obj: object, msg: string): void },
): Promise<(key: string) => StatusOf> {
  let items: Array<Record<string, unknown>>;
  try {
    items = await explorer.list('middlewares', 'http', {});
  } catch (err) {
    log.debug({ err: (err as Error).message }, 'Traefik not readable: plugin status stays configured');
    return () => CONFIGURED;
  }
  const byType = new Map<string, Array<Record<string, unknown>>>();
  for (const item of items) {
    // the type of a plugin middleware is its plugin key; compare case-insensitively to be lenient
    if (typeof item.type !== 'string') continue;
    const type = item.type.toLowerCase();
    byType.set(type, [...(byType.get(type) ?? []), item]);
  }
  return (key) => {
    const matches = byType.get(key.toLowerCase()) ?? [];
    if (matches.some((item) => item.status === 'enabled' || item.status === 'warning'))
      return { status: 'loaded', error: null };
    for (const item of matches) {
      const error = errorText(item);
      if (error) return { status: 'error', error };
    }
    return CONFIGURED;
  };
}
