/** Which data source the explorer reads (API.md §4.7 "Upstream"). */
import type { DataSourceRegistry } from '../datasource/index.ts';
import type { UpstreamSource } from '../datasource/index.ts';

/** A Traefik API data source: its name (for messages) and what the upstream client needs. */
export interface TraefikUpstream {
  name: string;
  source: UpstreamSource;
}

/**
 * The active source if its type is `traefik`, else the source named `traefik`, else the first
 * `traefik`-type source by name; null when there is none.
 */
export function selectTraefikSource(registry: DataSourceRegistry): TraefikUpstream | null {
  const active = registry.active();
  if (active?.source.type === 'traefik') {
    const { type, url, skip_tls_verify, basic_auth, timeout_ms } = active.source;
    return { name: active.name, source: { type, url, skip_tls_verify, basic_auth, timeout_ms } };
  }
  // list() is sorted by name, so the first traefik-type entry is the fallback
  const candidates = registry.list().filter((view) => view.type === 'traefik');
  const view = candidates.find((candidate) => candidate.name === 'traefik') ?? candidates[0];
  const source = view ? registry.source(view.name) : null;
  if (!view || !source) return null;
  const { url, skip_tls_verify, basic_auth, timeout_ms } = source;
  return { name: view.name, source: { type: 'traefik', url, skip_tls_verify, basic_auth, timeout_ms } };
}
