/** TypeBox schemas of the notifications group (API.md §4.21): channels per type, history, routes. */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ErrorBody, IdParams, JsonObject, NoBody, Paging, Slug } from '../../model/schemas.ts';

const tags = ['notifications'];
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const literals = <T extends string>(values: readonly T[], description: string) =>
  Type.Unsafe<T>(Type.String({ enum: [...values], description }));

export const CHANNEL_TYPES = ['webhook', 'ntfy', 'gotify', 'discord', 'slack', 'telegram', 'email'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];
export const CATEGORIES = ['proxy', 'certs', 'security', 'containers', 'backups', 'config', 'system'] as const;
export type Category = (typeof CATEGORIES)[number];
export const SEVERITIES = ['info', 'warning', 'error'] as const;
export type Severity = (typeof SEVERITIES)[number];
export const SCHEDULES = ['immediate', 'hourly', 'daily'] as const;
export type Schedule = (typeof SCHEDULES)[number];
export const HISTORY_STATUSES = ['sent', 'queued', 'failed', 'suppressed'] as const;
export type HistoryStatus = (typeof HISTORY_STATUSES)[number];

/** What GET shows instead of a stored secret, and what a PUT sends to keep it. */
export const SECRET_MASK = '********';

// ---- config per channel type ----

const HttpUrl = Type.String({ pattern: '^[hH][tT][tT][pP][sS]?://[^\\s]+$', maxLength: 2048 });
const Secret = Type.String({ minLength: 1, maxLength: 4096 });

export const CONFIG_SCHEMAS = {
  webhook: Type.Object(
    {
      url: HttpUrl,
      secret: Type.Optional(Secret),
      headers: Type.Optional(
        Type.Record(Type.String({ pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$" }), Type.String({ maxLength: 8192 }), {
          maxProperties: 100,
        }),
      ),
    },
    { additionalProperties: false },
  ),
  ntfy: Type.Object(
    { url: HttpUrl, topic: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }), token: Type.Optional(Secret) },
    { additionalProperties: false },
  ),
  gotify: Type.Object({ url: HttpUrl, token: Secret }, { additionalProperties: false }),
  discord: Type.Object({ webhook_url: HttpUrl }, { additionalProperties: false }),
  slack: Type.Object({ webhook_url: HttpUrl }, { additionalProperties: false }),
  telegram: Type.Object(
    {
      bot_token: Type.String({ pattern: '^[0-9]{1,20}:[A-Za-z0-9_-]{1,100}$' }),
      chat_id: Type.String({ pattern: '^(-?[0-9]{1,20}|@[A-Za-z0-9_]{1,64})$' }),
      api_url: Type.Optional(HttpUrl),
    },
    { additionalProperties: false },
  ),
  email: Type.Object(
    {
      host: Type.String({ minLength: 1, maxLength: 253 }),
      port: Type.Integer({ minimum: 1, maximum: 65535 }),
      security: literals(['tls', 'starttls', 'none'] as const, 'tls (implicit TLS), starttls or none'),
      username: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
      password: Type.Optional(Secret),
      from: Type.String({ minLength: 3, maxLength: 320, pattern: '@' }),
      to: Type.Array(Type.String({ minLength: 3, maxLength: 320, pattern: '@' }), { minItems: 1, maxItems: 50 }),
      ca: Type.Optional(
        Type.String({ maxLength: 65536, description: 'PEM of a private CA the server certificate chains to' }),
      ),
    },
    { additionalProperties: false },
  ),
} satisfies Record<ChannelType, TSchema>;

export type WebhookConfig = Static<typeof CONFIG_SCHEMAS.webhook>;
export type NtfyConfig = Static<typeof CONFIG_SCHEMAS.ntfy>;
export type GotifyConfig = Static<typeof CONFIG_SCHEMAS.gotify>;
export type DiscordConfig = Static<typeof CONFIG_SCHEMAS.discord>;
export type SlackConfig = Static<typeof CONFIG_SCHEMAS.slack>;
export type TelegramConfig = Static<typeof CONFIG_SCHEMAS.telegram>;
export type EmailConfig = Static<typeof CONFIG_SCHEMAS.email>;
export type ChannelConfig =
  WebhookConfig | NtfyConfig | GotifyConfig | DiscordConfig | SlackConfig | TelegramConfig | EmailConfig;

// ---- the channel ----

const Hhmm = Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:MM' });
export const QuietHours = Type.Object(
  {
    start: Hhmm,
    end: Hhmm,
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'IANA zone, default UTC' })),
  },
  { additionalProperties: false },
);

const Name = Type.String({ minLength: 1, maxLength: 100 });
const ChannelTypeField = literals(CHANNEL_TYPES, CHANNEL_TYPES.join(', '));
const CategoriesField = Type.Array(literals(CATEGORIES, CATEGORIES.join(', ')), {
  uniqueItems: true,
  maxItems: CATEGORIES.length,
  description: 'categories this channel gets; default all',
});
const SeverityField = literals(SEVERITIES, 'info, warning or error');
const ScheduleField = literals(SCHEDULES, 'immediate, hourly or daily (one digest per period)');
const MaxPerMinute = Type.Integer({ minimum: 1, maximum: 10_000, description: 'the excess folds into "N more"' });

/** A channel file `data/notifications/<id>.yaml` (hand edits may leave the defaulted fields out). */
export const ChannelFile = Type.Object({
  name: Name,
  type: ChannelTypeField,
  enabled: Type.Optional(Type.Boolean()),
  categories: Type.Optional(CategoriesField),
  min_severity: Type.Optional(SeverityField),
  schedule: Type.Optional(ScheduleField),
  quiet_hours: Type.Optional(Nullable(QuietHours)),
  max_per_minute: Type.Optional(MaxPerMinute),
  config: JsonObject,
});

/** A channel as the service holds it: defaults filled in. */
export interface ChannelData {
  name: string;
  type: ChannelType;
  enabled: boolean;
  categories: Category[];
  min_severity: Severity;
  schedule: Schedule;
  quiet_hours: Static<typeof QuietHours> | null;
  max_per_minute: number;
  config: Record<string, unknown>;
}

export const ChannelWrite = Type.Object({
  id: Type.Optional(Slug),
  name: Name,
  type: ChannelTypeField,
  enabled: Type.Optional(Type.Boolean({ default: true })),
  categories: Type.Optional(CategoriesField),
  min_severity: Type.Optional(SeverityField),
  schedule: Type.Optional(ScheduleField),
  quiet_hours: Type.Optional(Nullable(QuietHours)),
  max_per_minute: Type.Optional(MaxPerMinute),
  config: Type.Record(Type.String(), Type.Unknown(), {
    description: `per type (API.md §4.21); secrets read back as "${SECRET_MASK}", which a PUT may send to keep them`,
  }),
});
export type ChannelWriteBody = Static<typeof ChannelWrite>;

export const Channel = Type.Object(
  {
    id: Slug,
    name: Type.String(),
    type: ChannelTypeField,
    enabled: Type.Boolean(),
    categories: Type.Array(Type.String()),
    min_severity: SeverityField,
    schedule: ScheduleField,
    quiet_hours: Nullable(QuietHours),
    max_per_minute: Type.Integer(),
    config: Type.Record(Type.String(), Type.Unknown()),
    etag: Type.String(),
    created_at: Type.String(),
    updated_at: Type.String(),
  },
  { additionalProperties: false, $id: 'NotificationChannel' },
);
export type ChannelView = Static<typeof Channel>;

export const TestResult = Type.Object(
  {
    delivered: Type.Boolean(),
    latency_ms: Type.Number({ minimum: 0 }),
    error: Nullable(Type.String({ description: 'why it was not delivered, secrets scrubbed' })),
  },
  { additionalProperties: false },
);

export const HistoryEntry = Type.Object(
  {
    id: Type.String(),
    channel: Type.String({ description: 'channel id' }),
    category: Type.String(),
    severity: SeverityField,
    title: Type.String(),
    at: Type.String(),
    status: literals(HISTORY_STATUSES, HISTORY_STATUSES.join(', ')),
    attempts: Type.Integer({ minimum: 0 }),
    last_error: Nullable(Type.String()),
  },
  { additionalProperties: false, $id: 'NotificationHistoryEntry' },
);
export type HistoryView = Static<typeof HistoryEntry>;

export const HistoryQuery = Type.Object({
  channel: Type.Optional(Slug),
  status: Type.Optional(literals(HISTORY_STATUSES, HISTORY_STATUSES.join(', '))),
  since: Type.Optional(
    Type.String({
      pattern: '^([0-9]{1,9}(s|m|h|d)|[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9]{2}:[0-9]{2}))$',
      description: 'ISO-8601 timestamp or a duration before now (30s, 15m, 2h, 7d)',
    }),
  ),
  ...Paging,
});
export type HistoryQueryType = Static<typeof HistoryQuery>;

const ListQuery = Type.Object({ ...Paging });
const Errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 422: ErrorBody, 429: ErrorBody };
const WriteErrors = { ...Errors, 409: ErrorBody, 412: ErrorBody, 415: ErrorBody };

export const schemas = {
  list: {
    tags,
    summary: 'Notification channels, by id (secrets shown as ********)',
    querystring: ListQuery,
    response: { 200: Type.Array(Channel), ...Errors },
  },
  get: {
    tags,
    summary: 'One notification channel',
    params: IdParams,
    response: { 200: Channel, 304: NoBody, ...Errors },
  },
  create: {
    tags,
    summary: 'Add a notification channel (operator)',
    body: ChannelWrite,
    response: { 201: Channel, ...WriteErrors },
  },
  put: {
    tags,
    summary: 'Replace a notification channel; "********" keeps a stored secret (operator)',
    params: IdParams,
    body: ChannelWrite,
    response: { 200: Channel, ...WriteErrors },
  },
  remove: {
    tags,
    summary: 'Delete a notification channel; its queued messages are reported failed (operator)',
    params: IdParams,
    response: { 204: NoBody, ...WriteErrors },
  },
  test: {
    tags,
    summary: 'Send a real test message through the channel now (operator)',
    params: IdParams,
    response: { 200: TestResult, ...Errors },
  },
  history: {
    tags,
    summary: 'The last 1,000 notifications per channel delivery, newest first, plus every queued one',
    querystring: HistoryQuery,
    response: { 200: Type.Array(HistoryEntry), ...Errors },
  },
};
