/** TypeBox schemas of a Resource's `live` field (API.md §4.4, §4.19), shared by the resources and proxy-config groups. */
import { Type } from '@sinclair/typebox';
import { Nullable } from '../resource-config.ts';
import { LIVE_STATES_WORST_FIRST, type ResourceLive } from './types.ts';

export const LiveState = Type.Union(
  [
    Type.Literal('disabled'),
    Type.Literal('missing'),
    Type.Literal('outdated'),
    Type.Literal('warning'),
    Type.Literal('live'),
    Type.Literal('unknown'),
  ],
  { description: `worst first: ${LIVE_STATES_WORST_FIRST.join(' > ')}` },
);

export const ResourceLiveSchema = Type.Object(
  {
    state: LiveState,
    checked_at: Nullable(Type.String()),
    instances: Type.Array(
      Type.Object({
        source: Type.String({ description: 'the traefik data source' }),
        state: LiveState,
        errors: Type.Array(Type.String(), { description: "Traefik's error texts, verbatim" }),
        traefik_version: Nullable(Type.String()),
      }),
    ),
  },
  { description: 'what the Traefik instances run for this resource (§4.19); state: the worst instance state' },
);

/** Resource `live` without any Traefik instance, or before the checker is loaded. */
export const NOT_CHECKED: ResourceLive = Object.freeze({
  state: 'unknown' as const,
  checked_at: null,
  instances: Object.freeze([]) as unknown as ResourceLive['instances'],
});
