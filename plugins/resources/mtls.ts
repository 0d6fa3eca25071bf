/**
 * What the resources group and the config generator need to know about mTLS (API.md §4.8), read
 * from the `app.mtls` decorator of the mTLS group (plugins/mtls): `hasCa()`, `enabled()` and
 * `generatorState()`. It is looked up on every call, so registration order does not matter; an app
 * built without that group has no CA: enabling mTLS on a resource answers 409, the generator sees it off.
 */
import type { FastifyInstance } from 'fastify';
import { defaultMiddlewareConfig, type MtlsState } from '../../model/types.ts';

interface MtlsLike {
  hasCa?: () => boolean;
  enabled?: () => boolean;
  generatorState?: () => MtlsState;
}

const mtlsOf = (app: FastifyInstance): MtlsLike | undefined =>
  app.hasDecorator('mtls') ? (app as unknown as { mtls?: MtlsLike }).mtls : undefined;

/** null when a resource may enable mTLS, else the reason it may not. */
export function mtlsUnavailableReason(app: FastifyInstance): string | null {
  const mtls = mtlsOf(app);
  if (!mtls || typeof mtls.hasCa !== 'function' || !mtls.hasCa()) return 'no CA exists (POST /api/mtls/ca creates one)';
  if (typeof mtls.enabled !== 'function' || !mtls.enabled()) return 'mTLS is globally disabled (PUT /api/mtls/enable)';
  return null;
}

/** mTLS input of the config generator, as far as this group can tell. */
export function mtlsStateOf(app: FastifyInstance): MtlsState {
  const mtls = mtlsOf(app);
  if (mtls && typeof mtls.generatorState === 'function') return mtls.generatorState();
  const ready = mtlsUnavailableReason(app) === null;
  return {
    enabled: ready,
    // only whether a CA exists matters for effective_*; the PEM itself is the mTLS group's business
    ca_pem: ready ? 'CA' : null,
    plugin: null,
    middleware: defaultMiddlewareConfig(),
    verify_url: app.config.mtls.verify_url,
    proxy_ca_path: app.config.mtls.proxy_ca_path || null,
  };
}
