/** Schema of GET /metrics (API.md §4.22). */
import { Type } from '@sinclair/typebox';
import { ErrorBody } from '../../model/schemas.ts';

/** Prometheus' text exposition format, version 0.0.4. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export const metricsSchema = {
  tags: ['metrics'],
  summary: 'Prometheus metrics (text format 0.0.4): process, Node and the stackmanager_* series',
  response: {
    200: {
      description: 'Prometheus text exposition format',
      content: { 'text/plain': { schema: Type.String() } },
    },
    401: ErrorBody,
    403: ErrorBody,
  },
};

const CertificateSourceName = Type.Union([Type.Literal('metrics'), Type.Literal('acme')]);

/** GET /api/certificates: the expiry check's last result (docs/API.md "Certificates"). */
export const certificatesSchema = {
  tags: ['metrics'],
  summary: 'Every certificate Traefik reports (metrics, acme.json) with days left; ?refresh=true checks now',
  querystring: Type.Object(
    { refresh: Type.Optional(Type.Boolean({ description: 'run a check now (or join the one running) first' })) },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Object({
      checked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      sources: Type.Array(
        Type.Object({
          source: CertificateSourceName,
          url_or_path: Type.String(),
          ok: Type.Boolean(),
          error: Type.Union([Type.String(), Type.Null()]),
        }),
      ),
      certificates: Type.Array(
        Type.Object({
          cn: Type.String(),
          sans: Type.Optional(Type.Array(Type.String())),
          not_after: Type.String({ format: 'date-time' }),
          days_left: Type.Integer(),
          source: CertificateSourceName,
          resolver: Type.Optional(Type.String()),
          domains: Type.Optional(Type.Array(Type.String())),
        }),
      ),
    }),
    401: ErrorBody,
    403: ErrorBody,
    422: ErrorBody,
    503: ErrorBody,
  },
};
