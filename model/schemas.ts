/** TypeBox pieces every group's schemas use: query booleans, paging, error body, ids (API.md §2). */
import { Type } from '@sinclair/typebox';
import { SLUG_PATTERN } from '../core/ids.ts';

/** Query booleans accept `true|false|1|0` (API.md §2.1). */
export const QueryBool = Type.String({ pattern: '^(true|false|1|0)$', description: 'true, false, 1 or 0' });
export const isTrue = (value: string | undefined): boolean => value === 'true' || value === '1';

export const Slug = Type.String({ pattern: SLUG_PATTERN, description: 'slug id (API.md §2.8)' });
export const IdParams = Type.Object({ id: Slug });

export const ErrorBody = Type.Object(
  {
    id: Type.String(),
    message: Type.String(),
    details: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
  },
  { additionalProperties: true, $id: 'ErrorBody' },
);

export const Paging = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
};
export type PagingQuery = { page?: number; page_size?: number };

/** Standard error responses of object routes, for the route `response` maps. */
export const ErrorResponses = {
  400: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
  412: ErrorBody,
  415: ErrorBody,
  422: ErrorBody,
} as const;

/** Free-form JSON object (Traefik configs): kept as sent, never stripped. */
export const JsonObject = Type.Record(Type.String(), Type.Unknown());

/** A `description` field (API.md §2.10: ≤ 1000 chars). */
export const Description = Type.String({ maxLength: 1000 });

/**
 * Response schema of 204/304 answers. The document says `null`; the static type is `undefined`,
 * so `reply.send()` takes no payload, which is how those answers are sent (no body, no content-type).
 */
export const NoBody = Type.Unsafe<undefined>(Type.Null({ description: 'no body' }));
