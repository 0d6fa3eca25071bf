/** Schemas of /api/auth (API.md §4.15). Response schemas list their fields, so a hash can never be serialised. */
import { Type, type Static } from '@sinclair/typebox';
import { ErrorBody, Paging, Slug } from '../../model/schemas.ts';

export const RoleName = Type.Union([Type.Literal('viewer'), Type.Literal('operator'), Type.Literal('admin')]);
const Timestamp = Type.String({ format: 'date-time' });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

export const Token = Type.Object(
  {
    name: Slug,
    role: RoleName,
    created_at: Timestamp,
    expires_at: NullableTimestamp,
    last_used_at: NullableTimestamp,
  },
  { additionalProperties: false },
);

export const TokenList = Type.Array(Token);

export const CreatedToken = Type.Object(
  {
    name: Slug,
    role: RoleName,
    created_at: Timestamp,
    expires_at: NullableTimestamp,
    token: Type.String({ description: 'the clear token; shown only in this reply' }),
  },
  { additionalProperties: false },
);

export const CreateTokenBody = Type.Object({
  name: Slug,
  role: RoleName,
  expires_in_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650 })),
});

export const TokenParams = Type.Object({ name: Slug });
export const ListQuery = Type.Object(Paging);

export const WhoAmI = Type.Object(
  {
    name: Type.Union([Type.String(), Type.Null()]),
    role: RoleName,
    auth_mode: Type.Union([Type.Literal('off'), Type.Literal('ops'), Type.Literal('all')]),
  },
  { additionalProperties: false },
);

/** Errors every route here can answer (API.md §4: 401/403/429 per §2.3, 422 for bad input). */
export const CommonErrors = { 401: ErrorBody, 403: ErrorBody, 422: ErrorBody, 429: ErrorBody };

export type ListQueryType = Static<typeof ListQuery>;
