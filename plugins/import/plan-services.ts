/**
 * Services of middleware-manager → ours (API.md §4.24), planned like middlewares (plan-objects.ts):
 * by name, with the services group's rules, references `x@file` rewritten to our ids, and the
 * health rule between services of the same import, which the group cannot check before they exist.
 */
import { isObject } from '../../core/ids.ts';
import { serviceReferenceSlots } from '../services/index.ts';
import type { MmService } from './mm-database.ts';
import { ownReference, planObjects, warnDangling, type IdMap } from './plan-objects.ts';
import type { OurState, PlannedService, Skipped } from './types.ts';

const SERVICE_TYPES = new Set(['loadBalancer', 'weighted', 'mirroring', 'failover']);

/** Plans the services; a loadBalancer of `address` servers is TCP (middleware-manager's own rule). */
export function planServices(
  rows: MmService[],
  ours: OurState,
  skipped: Skipped[],
  warnings: string[],
): { planned: PlannedService[]; ids: IdMap } {
  const known = new Set(rows.map((r) => String(r.id)));
  return planObjects<PlannedService>({
    kind: 'service',
    rows,
    existing: ours.services,
    idTaken: (id) => ours.serviceIdTaken(id),
    build: (row, id, name, config) => {
      if (!SERVICE_TYPES.has(row.type))
        return `type ${row.type} is not a service type (${[...SERVICE_TYPES].join(', ')})`;
      const protocol = streamServers(row.type, config) ? 'tcp' : 'http';
      if (protocol === 'tcp')
        warnings.push(
          `service ${row.name}: servers with an address are imported as a tcp service (middleware-manager does not tell TCP from UDP)`,
        );
      const refs: string[] = [];
      const refPaths = new Set<string>();
      const copy = structuredClone(config);
      for (const at of serviceReferenceSlots(row.type, copy)) {
        const mm = ownReference(at.name, known);
        warnDangling(warnings, `service ${name}`, at.name, known);
        if (mm === null) continue;
        refs.push(mm);
        refPaths.add(at.path);
        at.set(mm);
      }
      return { planned: { id, name, type: row.type, protocol, config: copy, from: String(row.id) }, refs, refPaths };
    },
    rewrite: (planned, ids) => {
      for (const at of serviceReferenceSlots(planned.type, planned.config)) {
        const value = at.name;
        if (!value.includes('@') && ids.has(value)) at.set(ids.get(value)!);
      }
    },
    check: (p) => ours.checkService(p.id, { name: p.name, type: p.type, protocol: p.protocol, config: p.config }),
    crossCheck: healthProblem,
    skipped,
  });
}

const hasHealthCheck = (config: Record<string, unknown>) => isObject(config.healthCheck);

/**
 * Traefik follows the health of a failover's main service (and of its fallback when the failover has
 * a healthCheck) and of every member of a weighted service with a healthCheck; a member without a
 * healthCheck disables the service. The services group checks this against stored services only.
 */
function healthProblem(service: PlannedService, pending: Map<string, PlannedService>): string | null {
  if (service.protocol !== 'http') return null;
  const followed =
    service.type === 'failover'
      ? [service.config.service, hasHealthCheck(service.config) ? service.config.fallback : undefined]
      : service.type === 'weighted' && hasHealthCheck(service.config)
        ? serviceReferenceSlots('weighted', service.config).map((slot) => slot.name)
        : [];
  for (const ref of followed) {
    const target = typeof ref === 'string' ? pending.get(ref) : undefined;
    if (target && !hasHealthCheck(target.config))
      return `Traefik follows the health of ${target.id}, which has no healthCheck: it would disable this service and its routers`;
  }
  return null;
}

function streamServers(type: string, config: Record<string, unknown>): boolean {
  if (type !== 'loadBalancer' || !Array.isArray(config.servers)) return false;
  const servers = config.servers.filter(isObject);
  return servers.some((s) => 'address' in s) && !servers.some((s) => 'url' in s);
}
