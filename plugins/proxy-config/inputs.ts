/** Collects the generator's inputs from the other groups' in-memory state (no file reads). */
import type { FastifyInstance } from 'fastify';
import type { GenerationInput } from './generate.ts';
import type { Middleware, MtlsState, Resource, Service } from './model.ts';
import { defaultMiddlewareConfig } from './model.ts';

/** mTLS state while the mTLS group is not installed: globally disabled. */
function mtlsState(app: FastifyInstance): MtlsState {
  return {
    enabled: false,
    ca_pem: null,
    plugin: null,
    middleware: defaultMiddlewareConfig(),
    verify_url: app.config.mtls.verify_url,
    proxy_ca_path: app.config.mtls.proxy_ca_path || null,
  };
}

/** Returns the input builder; null from it means no config can be produced yet (G12, 502). */
export function generationInputs(app: FastifyInstance): () => GenerationInput | null {
  return () => {
    const mode = app.datasources.active()?.source.type ?? 'pangolin';
    let upstream: unknown = null;
    if (mode === 'pangolin') {
      const snapshot = app.upstream.current();
      if (!snapshot || snapshot.mode !== 'pangolin') return null;
      upstream = snapshot.body;
    } else {
      upstream = app.resources.traefikRouters();
    }
    return {
      mode,
      upstream,
      middlewares: app.middlewares.records().map((o) => ({ id: o.id, ...o.data }) as Middleware),
      services: app.services.records().map((o) => ({ id: o.id, ...o.data }) as Service),
      discoveredServices: app.upstream.discoveredServices(),
      resources: app.resources.list() as Resource[],
      mtls: mtlsState(app),
    };
  };
}
