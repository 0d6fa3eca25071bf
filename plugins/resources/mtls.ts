/**
 * Whether a resource may enable mTLS (API.md §4.8), from the `app.mtls` decorator of the mTLS
 * group (plugins/mtls), which this group declares as a dependency.
 */
import type { FastifyInstance } from 'fastify';

/** null when a resource may enable mTLS, else the reason it may not. */
export function mtlsUnavailableReason(app: FastifyInstance): string | null {
  if (!app.mtls.hasCa()) return 'no CA exists (POST /api/mtls/ca creates one)';
  if (!app.mtls.enabled()) return 'mTLS is globally disabled (PUT /api/mtls/enable)';
  return null;
}
