/** TypeBox schemas of the IP addresses group (API.md §4.12): requests and responses per status code. */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ErrorBody, QueryBool } from '../../model/schemas.ts';

const tags = ['ip'];
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
// checked by the service (net.isIP) so every bad form gets the same 422 message
const IpString = Type.String({ description: 'a single IPv4 or IPv6 address (no CIDR)' });

export const Decision = Type.Object(
  {
    id: Type.Integer(),
    type: Type.String({ description: 'remediation, e.g. ban or captcha' }),
    scope: Type.String({ description: 'Ip or Range' }),
    value: Type.String({ description: 'the address or CIDR the decision is on' }),
    origin: Type.String(),
    scenario: Type.String(),
    duration: Type.String({ description: 'remaining time as LAPI sends it (Go syntax)' }),
    until: Nullable(Type.String({ description: 'now + remaining duration (ISO-8601)' })),
  },
  { additionalProperties: false },
);
export type DecisionView = Static<typeof Decision>;

export const Alert = Type.Object(
  {
    id: Type.Integer(),
    scenario: Type.String(),
    message: Type.String(),
    created_at: Nullable(Type.String()),
    events_count: Type.Integer(),
    source: Type.Object(
      {
        ip: Nullable(Type.String()),
        range: Nullable(Type.String()),
        cn: Nullable(Type.String()),
        as_name: Nullable(Type.String()),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type AlertView = Static<typeof Alert>;

export const IpParams = Type.Object({ ip: IpString });
export const UnbanBody = Type.Object({ ip: IpString });

export const PublicIpBody = Type.Object(
  {
    ip: Type.String(),
    version: Type.Union([Type.Literal(4), Type.Literal(6)]),
    source: Type.String({ description: 'the provider URL that answered' }),
    checked_at: Type.String(),
    cached: Type.Boolean(),
    caller_ip: Type.String({ description: 'the requester address (honours server.trust_proxy)' }),
  },
  { additionalProperties: false },
);
export type PublicIpView = Static<typeof PublicIpBody>;

export const BlockedBody = Type.Object(
  { ip: Type.String(), blocked: Type.Boolean(), decisions: Type.Array(Decision) },
  { additionalProperties: false },
);
export type BlockedView = Static<typeof BlockedBody>;

export const SecurityBody = Type.Object(
  {
    ip: Type.String(),
    blocked: Type.Boolean(),
    decisions: Type.Array(Decision),
    alerts: Type.Array(Alert),
    allowlisted_by: Type.Array(Type.String(), {
      description: 'ids of our ipAllowList/ipWhiteList middlewares whose sourceRange contains the IP',
    }),
    warnings: Type.Array(Type.String()),
    checked_at: Type.String(),
  },
  { additionalProperties: false },
);
export type SecurityView = Static<typeof SecurityBody>;

export const UnbanResult = Type.Object(
  {
    ip: Type.String(),
    deleted: Type.Integer({ minimum: 0 }),
    still_blocked: Type.Boolean(),
    effective_within_s: Nullable(
      Type.Integer({
        minimum: 0,
        description: "seconds Traefik's CrowdSec bouncer may still act on its cache (API.md §4.23); null: none known",
      }),
    ),
  },
  { additionalProperties: false },
);
export type UnbanView = Static<typeof UnbanResult>;

const upstreamErrors = { 422: ErrorBody, 502: ErrorBody, 503: ErrorBody };

export const publicSchema = {
  tags,
  summary: 'The server public IP (cached 5 min) and the caller address',
  querystring: Type.Object({ refresh: Type.Optional(QueryBool) }),
  response: { 200: PublicIpBody, 422: ErrorBody, 502: ErrorBody },
};
export const blockedSchema = {
  tags,
  summary: 'CrowdSec decisions that apply to an IP',
  params: IpParams,
  response: { 200: BlockedBody, ...upstreamErrors },
};
export const securitySchema = {
  tags,
  summary: 'Decisions, alerts and allow-list middlewares for an IP',
  params: IpParams,
  response: { 200: SecurityBody, ...upstreamErrors },
};
export const unbanSchema = {
  tags,
  summary: 'Deletes the CrowdSec decisions on an IP',
  body: UnbanBody,
  response: { 200: UnbanResult, ...upstreamErrors },
};
