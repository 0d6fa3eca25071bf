/**
 * The HTTP request each service expects for one message (API.md §4.21): a generic JSON webhook
 * (HMAC-signed with `secret`), ntfy's JSON publish, Gotify's /message, Discord and Slack incoming
 * webhooks, and Telegram's Bot API sendMessage.
 */
import { createHmac } from 'node:crypto';
import type {
  DiscordConfig,
  GotifyConfig,
  NtfyConfig,
  SlackConfig,
  TelegramConfig,
  WebhookConfig,
} from '../schemas.ts';
import type { OutgoingMessage } from './types.ts';

export interface HttpRequestSpec {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Checks a 2xx answer's body (Telegram answers `{ok: false}` with 200 in some cases); returns an error text or null. */
  check?: (text: string) => string | null;
}

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };
export const USER_AGENT = 'stack-manager-notifications/1';
/** The signature header of webhook channels with a `secret`. */
export const SIGNATURE_HEADER = 'x-stack-manager-signature';

/** Joins a base URL and a path without doubling or losing the slash. */
const join = (base: string, path: string) => `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
const cut = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);
const EMOJI = { info: 'ℹ️', warning: '⚠️', error: '🚨' } as const;
/** Discord embed colours: blue, amber, red. */
const COLOUR = { info: 0x3b82f6, warning: 0xf59e0b, error: 0xdc2626 } as const;

export function webhookRequest(config: WebhookConfig, message: OutgoingMessage): HttpRequestSpec {
  const body = JSON.stringify({
    source: 'stack-manager',
    id: message.id,
    category: message.category,
    severity: message.severity,
    title: message.title,
    message: message.body,
    at: message.at,
  });
  const headers: Record<string, string> = { ...(config.headers ?? {}), ...JSON_TYPE };
  if (config.secret)
    headers[SIGNATURE_HEADER] = `sha256=${createHmac('sha256', config.secret).update(body).digest('hex')}`;
  return { url: config.url, headers, body };
}

/** ntfy's JSON publishing (POST to the server root; the topic goes in the body): UTF-8 titles work. */
export function ntfyRequest(config: NtfyConfig, message: OutgoingMessage): HttpRequestSpec {
  const priority = { info: 3, warning: 4, error: 5 }[message.severity];
  const tags = [message.severity === 'error' ? 'rotating_light' : message.severity, message.category];
  const headers: Record<string, string> = { ...JSON_TYPE };
  if (config.token) headers.authorization = `Bearer ${config.token}`;
  return {
    url: join(config.url, ''),
    headers,
    body: JSON.stringify({ topic: config.topic, title: message.title, message: message.body, priority, tags }),
  };
}

/** Gotify: POST /message with the application token in X-Gotify-Key (not in the URL, where proxies log it). */
export function gotifyRequest(config: GotifyConfig, message: OutgoingMessage): HttpRequestSpec {
  const priority = { info: 2, warning: 5, error: 8 }[message.severity];
  return {
    url: join(config.url, 'message'),
    headers: { ...JSON_TYPE, 'x-gotify-key': config.token },
    body: JSON.stringify({ title: message.title, message: message.body, priority }),
  };
}

/** Discord's execute-webhook: one embed (title ≤ 256, description ≤ 4096 characters). */
export function discordRequest(config: DiscordConfig, message: OutgoingMessage): HttpRequestSpec {
  return {
    url: config.webhook_url,
    headers: { ...JSON_TYPE },
    body: JSON.stringify({
      username: 'Stack Manager',
      embeds: [
        {
          title: cut(`${EMOJI[message.severity]} ${message.title}`, 256),
          description: cut(message.body, 4096),
          color: COLOUR[message.severity],
          timestamp: message.at,
          footer: { text: `${message.category} · ${message.severity}` },
        },
      ],
      allowed_mentions: { parse: [] },
    }),
  };
}

/** Slack incoming webhook: `text` (mrkdwn) — shown in notifications too. */
export function slackRequest(config: SlackConfig, message: OutgoingMessage): HttpRequestSpec {
  const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return {
    url: config.webhook_url,
    headers: { ...JSON_TYPE },
    body: JSON.stringify({
      text: `${EMOJI[message.severity]} *${escape(message.title)}*\n${escape(message.body)}\n_${message.category} · ${message.severity}_`,
    }),
  };
}

/** Telegram Bot API sendMessage (plain text: nothing to escape; ≤ 4096 characters). */
export function telegramRequest(config: TelegramConfig, message: OutgoingMessage): HttpRequestSpec {
  const base = config.api_url ?? 'https://api.telegram.org';
  return {
    url: join(base, `bot${config.bot_token}/sendMessage`),
    headers: { ...JSON_TYPE },
    body: JSON.stringify({
      chat_id: config.chat_id,
      text: cut(`${EMOJI[message.severity]} ${message.title}\n\n${message.body}`, 4096),
      disable_web_page_preview: true,
    }),
    check: (text) => {
      try {
        const answer = JSON.parse(text) as { ok?: unknown; description?: unknown };
        return answer.ok === true ? null : `Telegram answered ok=false: ${String(answer.description ?? text)}`;
      } catch {
        return 'Telegram answered something that is not JSON';
      }
    },
  };
}
