/** Schemas of GET /api/health and /api/health/live (API.md §4.1). */
import { Type, type Static } from '@sinclair/typebox';
import { QueryBool } from '../../model/schemas.ts';

export const Check = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('fail'), Type.Literal('skipped')]),
  latency_ms: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()]),
});

export const CHECK_NAMES = ['data_dir', 'docker', 'crowdsec', 'datasource'] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

export const Health = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('fail')]),
  version: Type.String(),
  uptime_s: Type.Integer(),
  checks: Type.Optional(
    Type.Object(Object.fromEntries(CHECK_NAMES.map((n) => [n, Check])) as Record<CheckName, typeof Check>),
  ),
});

/** GET /api/health/live once the app serves (the early handler answers `starting` before). */
export const Liveness = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('starting')]),
  version: Type.String(),
  uptime_s: Type.Integer(),
});

export const HealthQuery = Type.Object({ deep: Type.Optional(QueryBool) });

export type CheckResult = Static<typeof Check>;
export type HealthBody = Static<typeof Health>;
