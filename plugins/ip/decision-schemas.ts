/** TypeBox schemas of CrowdSec decisions and allowlists (API.md §4.23). */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ErrorBody, NoBody, Paging, Slug } from '../../model/schemas.ts';

const tags = ['ip'];
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
// checked by the service (ip-range.ts) so every bad form gets one message naming what was sent
const TargetString = Type.String({ maxLength: 100, description: 'an IPv4/IPv6 address or a CIDR range' });
const EffectiveWithinS = Nullable(
  Type.Integer({
    minimum: 0,
    description: "seconds Traefik's CrowdSec bouncer may still act on its cache; null: no bouncer middleware known",
  }),
);

export const ManagedDecision = Type.Object(
  {
    id: Type.Integer(),
    origin: Type.String(),
    type: Type.String({ description: 'ban, captcha, …' }),
    scope: Type.String({ description: 'Ip or Range' }),
    value: Type.String(),
    scenario: Type.String(),
    duration: Type.String({ description: 'remaining time as LAPI sends it (Go syntax)' }),
    expires_at: Nullable(Type.String({ description: 'now + remaining duration (ISO-8601)' })),
    simulated: Type.Boolean(),
  },
  { additionalProperties: false },
);
export type ManagedDecisionView = Static<typeof ManagedDecision>;

export const DecisionsQuery = Type.Object({
  value: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  scope: Type.Optional(Type.Union([Type.Literal('ip'), Type.Literal('range')])),
  type: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
  origin: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
  scenario: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  ...Paging,
});

export const DecisionCreate = Type.Object({
  value: TargetString,
  type: Type.Optional(Type.Union([Type.Literal('ban'), Type.Literal('captcha')], { default: 'ban' })),
  duration: Type.Optional(Type.String({ maxLength: 40, description: 'Go duration, 1m–8760h (default 4h)' })),
  reason: Type.Optional(Type.String({ maxLength: 200 })),
});
export type DecisionCreateBody = Static<typeof DecisionCreate>;

export const DecisionsCreated = Type.Object(
  { decisions: Type.Array(ManagedDecision), effective_within_s: EffectiveWithinS },
  { additionalProperties: false },
);
export type DecisionsCreatedView = Static<typeof DecisionsCreated>;

export const DecisionIdParams = Type.Object({ id: Type.String({ pattern: '^[0-9]{1,15}$' }) });

export const AllowlistEntry = Type.Object(
  {
    id: Slug,
    value: Type.String(),
    reason: Type.String(),
    expires_at: Nullable(Type.String()),
    created_by: Type.String(),
    created_at: Type.String(),
    removed_decisions: Type.Integer({ minimum: 0, description: 'decisions this entry has removed so far' }),
  },
  { additionalProperties: false },
);
export type AllowlistEntryView = Static<typeof AllowlistEntry>;

export const AllowlistCreate = Type.Object({
  value: TargetString,
  reason: Type.Optional(Type.String({ maxLength: 200 })),
  ttl: Type.Optional(Nullable(Type.String({ maxLength: 40, description: 'Go duration (1m–8760h); null: no expiry' }))),
});
export type AllowlistCreateBody = Static<typeof AllowlistCreate>;

export const AllowlistCreated = Type.Object(
  {
    ...AllowlistEntry.properties,
    removed: Type.Array(ManagedDecision, { description: 'the decisions this entry removed at once' }),
    effective_within_s: EffectiveWithinS,
  },
  { additionalProperties: false },
);
export type AllowlistCreatedView = Static<typeof AllowlistCreated>;

const errorsOf = (...codes: number[]) => Object.fromEntries(codes.map((code) => [code, ErrorBody]));

export const listDecisionsSchema = {
  tags,
  summary: 'Active CrowdSec decisions, filtered and paged',
  querystring: DecisionsQuery,
  response: { 200: Type.Array(ManagedDecision), ...errorsOf(422, 502, 503) },
};
export const createDecisionSchema = {
  tags,
  summary: 'Adds a ban or captcha decision (as cscli decisions add does)',
  body: DecisionCreate,
  response: { 201: DecisionsCreated, ...errorsOf(409, 422, 502, 503) },
};
export const deleteDecisionSchema = {
  tags,
  summary: 'Deletes one decision; X-Effective-Within says when Traefik lets go',
  params: DecisionIdParams,
  response: { 204: NoBody, ...errorsOf(404, 422, 502, 503) },
};
export const listAllowlistSchema = {
  tags,
  summary: 'Active allowlist entries',
  response: { 200: Type.Array(AllowlistEntry) },
};
export const createAllowlistSchema = {
  tags,
  summary: 'Allowlists an address or range (optional TTL) and removes the decisions on it',
  body: AllowlistCreate,
  response: { 201: AllowlistCreated, ...errorsOf(422, 502, 503) },
};
export const deleteAllowlistSchema = {
  tags,
  summary: 'Removes an allowlist entry',
  params: Type.Object({ id: Slug }),
  response: { 204: NoBody, ...errorsOf(404, 422) },
};
