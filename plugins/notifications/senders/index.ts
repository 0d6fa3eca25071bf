/** One sender per channel type (API.md §4.21): HTTP services through fetch, email through nodemailer. */
import type {
  ChannelType,
  DiscordConfig,
  EmailConfig,
  GotifyConfig,
  NtfyConfig,
  SlackConfig,
  TelegramConfig,
  WebhookConfig,
} from '../schemas.ts';
import { sendEmail } from './email.ts';
import {
  USER_AGENT,
  discordRequest,
  gotifyRequest,
  ntfyRequest,
  slackRequest,
  telegramRequest,
  webhookRequest,
  type HttpRequestSpec,
} from './http-requests.ts';
import type { OutgoingMessage, Send } from './types.ts';

export type { OutgoingMessage, Send } from './types.ts';

/** The sender of a channel; `timeoutMs` bounds each attempt, `signal` abandons it early (shutdown). */
export function senderFor(type: ChannelType, config: Record<string, unknown>, timeoutMs: number): Send {
  const http = (build: (message: OutgoingMessage) => HttpRequestSpec): Send => {
    return (message, signal) => post(build(message), timeoutMs, signal);
  };
  switch (type) {
    case 'webhook':
      return http((message) => webhookRequest(config as WebhookConfig, message));
    case 'ntfy':
      return http((message) => ntfyRequest(config as NtfyConfig, message));
    case 'gotify':
      return http((message) => gotifyRequest(config as GotifyConfig, message));
    case 'discord':
      return http((message) => discordRequest(config as DiscordConfig, message));
    case 'slack':
      return http((message) => slackRequest(config as SlackConfig, message));
    case 'telegram':
      return http((message) => telegramRequest(config as TelegramConfig, message));
    case 'email':
      return (message, signal) => sendEmail(config as EmailConfig, message, signal, timeoutMs);
  }
}

/** POSTs and reads the answer; a non-2xx status (redirects included) is an error quoting the start of the body. */
async function post(spec: HttpRequestSpec, timeoutMs: number, signal: AbortSignal): Promise<void> {
  let response: Response;
  try {
    response = await fetch(spec.url, {
      method: 'POST',
      headers: { 'user-agent': USER_AGENT, ...spec.headers },
      body: spec.body,
      redirect: 'manual',
      signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
    });
  } catch (err) {
    throw new Error(describeFetchError(err, timeoutMs), { cause: err });
  }
  const text = await response.text().catch(() => '');
  if (response.status < 200 || response.status > 299)
    throw new Error(`HTTP ${response.status}${text ? `: ${text.slice(0, 200).replace(/\s+/g, ' ')}` : ''}`);
  const problem = spec.check?.(text);
  if (problem) throw new Error(problem.slice(0, 300));
}

/** fetch's errors say little ("fetch failed"); the cause names the socket error. */
function describeFetchError(err: unknown, timeoutMs: number): string {
  if (err instanceof DOMException && err.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  if (err instanceof DOMException && err.name === 'AbortError') return 'the send was abandoned (shutdown)';
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const detail = [cause?.code, cause?.message].filter((part) => part).join(' ');
  const base = err instanceof Error ? err.message : String(err);
  return detail ? `${base}: ${detail}` : base;
}
