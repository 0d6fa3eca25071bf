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
