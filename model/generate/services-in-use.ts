/**
 * Which of our services go into Traefik's configuration. Manual services always do. Template
 * services (seeded examples such as `example-app` → `http://app-1:8080`) are offered, not deployed:
 * they are emitted only once something emitted uses them — a resource (its service or TCP service)
 * or an emitted weighted/mirroring/failover service — so Traefik never health-checks example hosts.
 */
import { isObject } from '../../core/ids.ts';
import type { Resource, Service } from '../types.ts';

/** Ids a weighted, mirroring or failover service refers to (without `@provider` ones' meaning). */
export function serviceReferences(s: Service): string[] {
  const c = s.config;
  const refs: unknown[] = [];
  const names = (list: unknown) => (Array.isArray(list) ? list.map((e) => (isObject(e) ? e.name : undefined)) : []);
  if (s.type === 'weighted') refs.push(...names(c.services));
  if (s.type === 'mirroring') refs.push(c.service, ...names(c.mirrors));
  if (s.type === 'failover') refs.push(c.service, c.fallback);
  return refs.filter((r): r is string => typeof r === 'string');
}

/** The services to emit: the same array when no template service is left out (the usual case once templates are used or deleted). */
export function servicesToEmit(services: readonly Service[], resources: readonly Resource[]): readonly Service[] {
  if (!services.some((s) => s.source === 'template')) return services;
  const byId = new Map(services.map((s) => [s.id, s]));
  const used = new Set<string>();
  const pending: string[] = [];
  const use = (id: string | null | undefined) => {
    if (!id || used.has(id) || !byId.has(id)) return;
    used.add(id);
    pending.push(id);
  };
  for (const s of services) if (s.source !== 'template') use(s.id);
  for (const r of resources) {
    use(r.service_id);
    use(r.config?.tcp?.service_id);
  }
  // services used by emitted services are emitted too (a weighted service over two templates)
  while (pending.length > 0) for (const ref of serviceReferences(byId.get(pending.pop()!)!)) use(ref);
  return services.filter((s) => used.has(s.id));
}
