/**
 * Channel secrets (API.md §4.21): which config fields are secret per type, masking them in views,
 * keeping the stored value when a PUT sends the mask back, and scrubbing them out of any text
 * (errors of receivers, SMTP servers and fetch) before it reaches history, logs or a response.
 */
import { SECRET_MASK, type ChannelType } from './schemas.ts';

/** Secret fields per type. Webhook header values count too (they usually carry an Authorization). */
const SECRET_FIELDS: Record<ChannelType, readonly string[]> = {
  webhook: ['secret'],
  ntfy: ['token'],
  gotify: ['token'],
  // a Discord or Slack webhook URL is itself the credential
  discord: ['webhook_url'],
  slack: ['webhook_url'],
  telegram: ['bot_token'],
  email: ['password'],
};

type Config = Record<string, unknown>;

/** The config with every secret replaced by the mask. */
export function maskConfig(type: ChannelType, config: Config): Config {
  const masked: Config = { ...config };
  for (const field of SECRET_FIELDS[type]) if (typeof masked[field] === 'string') masked[field] = SECRET_MASK;
  if (type === 'webhook' && isRecord(masked.headers))
    masked.headers = Object.fromEntries(Object.keys(masked.headers).map((name) => [name, SECRET_MASK]));
  return masked;
}

/**
 * A written config with each mask replaced by the stored value of the same field (same type only).
 * Returns the fields that were masked but have nothing stored, so the caller can refuse them.
 */
export function restoreSecrets(
  type: ChannelType,
  written: Config,
  stored: { type: ChannelType; config: Config } | undefined,
): { config: Config; unknownMasks: string[] } {
  const config: Config = { ...written };
  const unknownMasks: string[] = [];
  const from = stored && stored.type === type ? stored.config : {};
  for (const field of SECRET_FIELDS[type]) {
    if (config[field] !== SECRET_MASK) continue;
    if (typeof from[field] === 'string') config[field] = from[field];
    else unknownMasks.push(`/config/${field}`);
  }
  if (type === 'webhook' && isRecord(config.headers)) {
    const storedHeaders = isRecord(from.headers) ? from.headers : {};
    const headers: Config = {};
    for (const [name, value] of Object.entries(config.headers)) {
      if (value !== SECRET_MASK) headers[name] = value;
      else if (typeof storedHeaders[name] === 'string') headers[name] = storedHeaders[name];
      else unknownMasks.push(`/config/headers/${name}`);
    }
    config.headers = headers;
  }
  return { config, unknownMasks };
}

/** Every secret value of a config, and the parts of secret URLs a message could quote on their own. */
export function secretsOf(type: ChannelType, config: Config): string[] {
  const values: string[] = [];
  for (const field of SECRET_FIELDS[type]) {
    const value = config[field];
    if (typeof value !== 'string') continue;
    values.push(value);
    if (field.endsWith('_url')) values.push(...urlParts(value));
  }
  if (type === 'webhook' && isRecord(config.headers))
    for (const value of Object.values(config.headers)) if (typeof value === 'string') values.push(value);
  // a URL may carry credentials of its own (user:password@, ?token=)
  for (const field of ['url', 'api_url'])
    if (typeof config[field] === 'string') values.push(...urlCredentials(config[field]));
  // longest first, so a secret that contains another is replaced whole
  return [...new Set(values.filter((value) => value.length >= 4))].sort((a, b) => b.length - a.length);
}

/** `text` with every secret replaced by the mask (and Telegram-style bot tokens wherever they appear). */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join(SECRET_MASK);
  return out.replace(/bot[0-9]{1,20}:[A-Za-z0-9_-]+/g, `bot${SECRET_MASK}`);
}

function urlParts(value: string): string[] {
  try {
    const url = new URL(value);
    const path = url.pathname.split('/').filter((part) => part.length >= 8);
    return [url.pathname + url.search, ...path, ...urlCredentials(value)].filter((part) => part.length > 1);
  } catch {
    return [];
  }
}

function urlCredentials(value: string): string[] {
  try {
    const url = new URL(value);
    return [url.username, url.password, ...[...url.searchParams.values()]].filter((part) => part !== '');
  } catch {
    return [];
  }
}

const isRecord = (value: unknown): value is Config =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
