/** Schema pieces every group uses: query booleans, paging, error body (API.md §2). */
import { Type, type Static } from '@sinclair/typebox';

/** Query booleans accept `true|false|1|0` (API.md §2.1). */
export const QueryBool = Type.String({ pattern: '^(true|false|1|0)$', description: 'true, false, 1 or 0' });
export const isTrue = (value: string | undefined): boolean => value === 'true' || value === '1';

export const Slug = Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,62}$', description: 'slug id (API.md §2.8)' });
export const IdParams = Type.Object({ id: Slug });

export const ErrorBody = Type.Object({
  id: Type.String(),
  message: Type.String(),
  details: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
}, { additionalProperties: true, $id: 'ErrorBody' });

export const Paging = {
  page: Type.Optional(Type.Integer({ minimum: 1 })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
};
export type PagingQuery = { page?: number; page_size?: number };
export type ErrorBodyType = Static<typeof ErrorBody>;
