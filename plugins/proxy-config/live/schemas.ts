/** TypeBox schemas of the live status (API.md §4.19): Resource `live`, the Diagnosis and its query. */
import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from '../../../model/resource-config.ts';
import type { Diagnosis as DiagnosisType, ResourceLive } from '../../../model/live/types.ts';
import { ResourceLiveSchema } from '../../../model/live/schemas.ts';

export { LiveState, NOT_CHECKED, ResourceLiveSchema } from '../../../model/live/schemas.ts';

const FindingKind = Type.Union([
  Type.Literal('traefik_unreachable'),
  Type.Literal('document_behind'),
  Type.Literal('plugins_disabled'),
  Type.Literal('router_disabled'),
  Type.Literal('middleware_error'),
  Type.Literal('service_no_servers'),
  Type.Literal('entrypoint_missing'),
  Type.Literal('priority_tie'),
  Type.Literal('keys_dropped'),
  Type.Literal('version_unknown'),
  Type.Literal('history_push_failed'),
]);

export const FindingSchema = Type.Object({
  id: Type.String({ description: 'stable while the finding persists' }),
  severity: Type.Union([Type.Literal('error'), Type.Literal('warning'), Type.Literal('info')]),
  kind: FindingKind,
  message: Type.String(),
  resources: Type.Array(Type.String()),
  middlewares: Type.Array(Type.String()),
  fix: Type.String(),
});

export const DiagnosisSchema = Type.Object({
  checked_at: Nullable(Type.String()),
  instances: Type.Array(
    Type.Object({
      source: Type.String(),
      reachable: Type.Boolean(),
      version: Nullable(Type.String()),
      document: Type.Union([Type.Literal('current'), Type.Literal('behind'), Type.Literal('unknown')]),
      since: Nullable(Type.String()),
    }),
  ),
  findings: Type.Array(FindingSchema),
});

export const DiagnosisQuery = Type.Object({
  refresh: Type.Optional(
    Type.Boolean({ description: 'true: check every Traefik instance now and answer its results' }),
  ),
});

// the schemas describe the shared types exactly
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const diagnosisMatches: Same<Static<typeof DiagnosisSchema>, DiagnosisType> = true;
const liveMatches: Same<Static<typeof ResourceLiveSchema>, ResourceLive> = true;
void diagnosisMatches;
void liveMatches;
