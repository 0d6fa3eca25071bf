/**
 * Collects the generator's inputs from the other groups' in-memory state (no file reads). The
 * builder runs only at generation time (onReady and later), when every group is registered; the
 * `mtls` group's writes go through the store, whose change events regenerate (G1).
 */
import type { FastifyInstance } from 'fastify';
import type { GenerationInput } from '../../model/generate/generate.ts';
import type { Middleware, Resource, Service } from '../../model/types.ts';

/** Returns the input builder; null from it means no config can be produced yet (G12, 502). */
export function generationInputs(app: FastifyInstance): () => GenerationInput | null {
  return () => {
    const mode = app.datasources.mode();
    let upstream: unknown = null;
    // mode none (API.md §4.24): no upstream, our own objects only
    if (mode === 'pangolin') {
      const snapshot = app.upstream.current();
      if (!snapshot || snapshot.mode !== 'pangolin') return null;
      upstream = snapshot.body;
    } else if (mode === 'traefik') {
      upstream = app.resources.traefikRouters();
    }
    return {
      mode,
      upstream,
      middlewares: app.middlewares.records().map((o) => ({ id: o.id, ...o.data }) as Middleware),
      services: app.services.records().map((o) => ({ id: o.id, ...o.data }) as Service),
      discoveredServices: app.upstream.discoveredServices(),
      resources: app.resources.list() as Resource[],
      mtls: app.mtls.generatorState(),
    };
  };
}
