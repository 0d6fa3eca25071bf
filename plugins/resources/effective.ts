/**
 * `effective_middlewares`, `effective_service`, `emitted` and `warnings` of resources (API.md §4.4,
 * G5–G7). Computed by the config generator itself (proxy-config/generate.ts) on just the resources
 * asked about and the objects they reference, so the API always shows what would be emitted and
 * the G6/G7 rules live in one place.
 */
import type { ResourceRecord } from '../../model/upstream-routers.ts';
import type { DiscoveredService as UpstreamDiscovered } from '../../model/upstream-state.ts';
import { generateConfig, type ResourceOutcome } from '../../model/generate/generate.ts';
import type { Middleware, MtlsState, Resource, Service } from '../../model/types.ts';

/** Everything outside the resources that the outcome depends on. */
export interface EffectiveInputs {
  mode(): 'pangolin' | 'traefik' | 'none';
  /** Pangolin: the last good body; Traefik: the last router list. */
  upstream(): unknown;
  middleware(id: string): Middleware | undefined;
  /** A manual/template service by id (discovered ones come from `discovered()`). */
  service(id: string): Service | undefined;
  discovered(): UpstreamDiscovered[];
  mtls(): MtlsState;
}

// the stored record is the generator's Resource as is: this fails to compile if the two drift apart
const asResource = (record: ResourceRecord): Resource => record;

/** Outcomes by resource id for the given records (one generator run for all of them). */
export function outcomesFor(inputs: EffectiveInputs, records: ResourceRecord[]): Map<string, ResourceOutcome> {
  const outcomes = new Map<string, ResourceOutcome>();
  if (records.length === 0) return outcomes;
  const middlewares = new Map<string, Middleware>();
  const services = new Map<string, Service>();
  for (const record of records) {
    for (const { id } of record.middlewares) {
      const found = middlewares.has(id) ? undefined : inputs.middleware(id);
      if (found) middlewares.set(id, found);
    }
    for (const id of [record.service_id, record.config.tcp.service_id]) {
      const found = id === null || services.has(id) ? undefined : inputs.service(id);
      if (found) services.set(found.id, found);
    }
  }
  const result = generateConfig({
    mode: inputs.mode(),
    upstream: inputs.upstream(),
    middlewares: [...middlewares.values()],
    services: [...services.values()],
    discoveredServices: inputs.discovered(),
    resources: records.map(asResource),
    mtls: inputs.mtls(),
  });
  for (const record of records) {
    const outcome = result.resources[record.id];
    const from = `/api/resources/${record.id}`;
    const dangling = result.dangling_references
      .filter((d) => d.from === from)
      .map((d) => `${d.ref} does not exist; the reference is skipped`);
    outcomes.set(record.id, { ...outcome, warnings: [...outcome.warnings, ...dangling] });
  }
  return outcomes;
}
