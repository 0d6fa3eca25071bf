/**
 * Each channel type against a real receiver on 127.0.0.1 (API.md §4.21): the URL, headers and body
 * each service expects (ntfy JSON publish, Gotify /message, Discord and Slack webhooks, Telegram
 * sendMessage), and email through a real SMTP server (smtp-server): plain with AUTH, STARTTLS and
 * implicit TLS with a self-signed certificate given as `ca`.
 */
import test from 'ava';
import type { FastifyInstance } from 'fastify';
import { build } from '../helpers/build.ts';
import { selfSigned, startReceiver, startSmtp } from './support.ts';

async function channelTest(
  app: FastifyInstance,
  payload: object,
): Promise<{ delivered: boolean; error: string | null }> {
  const created = await app.inject({ method: 'POST', url: '/api/notifications/channels', payload });
  if (created.statusCode !== 201) throw new Error(created.body);
  const response = await app.inject({ method: 'POST', url: `/api/notifications/channels/${created.json().id}/test` });
  return response.json();
}

test('ntfy: JSON publish to the server root with topic, title, priority, tags and the Bearer token', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const ntfy = await startReceiver(t, { body: '{"id":"x","event":"message"}' });
  const result = await channelTest(app, {
    name: 'phone',
    type: 'ntfy',
    config: { url: `${ntfy.url}/`, topic: 'stack-alerts', token: 'tk_ntfy_secret' },
  });
  t.deepEqual(result, { ...result, delivered: true, error: null });
  const [request] = ntfy.received;
  t.is(request.url, '/');
  t.is(request.headers.authorization, 'Bearer tk_ntfy_secret');
  const body = JSON.parse(request.body);
  t.like(body, { topic: 'stack-alerts', priority: 3, tags: ['info', 'system'] });
  t.regex(body.title, /^Test message from Stack Manager \(phone\)$/);
  t.regex(body.message, /test of the notification channel "phone" \(ntfy\)/);
});

test('gotify: POST /message with X-Gotify-Key and {title, message, priority}', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const gotify = await startReceiver(t, { body: '{"id":1}' });
  const result = await channelTest(app, {
    name: 'gotify',
    type: 'gotify',
    config: { url: `${gotify.url}/gotify/`, token: 'AppTokenSecret1' },
  });
  t.true(result.delivered, String(result.error));
  const [request] = gotify.received;
  t.is(request.url, '/gotify/message');
  t.is(request.headers['x-gotify-key'], 'AppTokenSecret1');
  t.false(request.url.includes('AppTokenSecret1'));
  t.like(JSON.parse(request.body), { priority: 2, title: 'Test message from Stack Manager (gotify)' });
});

test('discord: one embed with title, description, colour and timestamp; no mentions', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const discord = await startReceiver(t, { status: 204 });
  const result = await channelTest(app, {
    name: 'discord',
    type: 'discord',
    config: { webhook_url: `${discord.url}/api/webhooks/123/WebhookTokenSecret` },
  });
  t.true(result.delivered, String(result.error));
  const [request] = discord.received;
  t.is(request.url, '/api/webhooks/123/WebhookTokenSecret');
  const body = JSON.parse(request.body);
  t.is(body.embeds.length, 1);
  t.regex(body.embeds[0].title, /Test message from Stack Manager \(discord\)$/);
  t.is(body.embeds[0].color, 0x3b82f6);
  t.truthy(Date.parse(body.embeds[0].timestamp));
  t.deepEqual(body.allowed_mentions, { parse: [] });
  // an error quoting the webhook URL is scrubbed
  discord.behaviour.status = 404;
  discord.behaviour.body = `{"message": "Unknown Webhook /api/webhooks/123/WebhookTokenSecret"}`;
  const failed = await app.inject({ method: 'POST', url: '/api/notifications/channels/discord/test' });
  t.false(failed.json().delivered);
  t.false(failed.body.includes('WebhookTokenSecret'), failed.body);
});

test('slack: incoming webhook {text} in mrkdwn with the title in bold', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const slack = await startReceiver(t, { body: 'ok' });
  const result = await channelTest(app, {
    name: 'slack',
    type: 'slack',
    config: { webhook_url: `${slack.url}/services/T000/B000/SlackSecretXyz` },
  });
  t.true(result.delivered, String(result.error));
  const body = JSON.parse(slack.received[0].body);
  t.deepEqual(Object.keys(body), ['text']);
  t.regex(body.text, /\*Test message from Stack Manager \(slack\)\*\n/);
});

test('telegram: sendMessage at api_url with chat_id and text; ok=false and the bot token never shown', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const telegram = await startReceiver(t, { body: '{"ok":true,"result":{"message_id":1}}' });
  const result = await channelTest(app, {
    name: 'tg',
    type: 'telegram',
    config: { bot_token: '123456:AAH-secret_Token', chat_id: '-1001234', api_url: telegram.url },
  });
  t.true(result.delivered, String(result.error));
  const [request] = telegram.received;
  t.is(request.url, '/bot123456:AAH-secret_Token/sendMessage');
  const body = JSON.parse(request.body);
  t.is(body.chat_id, '-1001234');
  t.regex(body.text, /Test message from Stack Manager \(tg\)/);
  telegram.behaviour.status = 401;
  telegram.behaviour.body = '{"ok":false,"error_code":401,"description":"Unauthorized bot123456:AAH-secret_Token"}';
  const failed = await app.inject({ method: 'POST', url: '/api/notifications/channels/tg/test' });
  t.false(failed.json().delivered);
  t.regex(failed.json().error, /^HTTP 401/);
  t.false(failed.body.includes('AAH-secret_Token'), failed.body);
  telegram.behaviour.status = 200;
  telegram.behaviour.body = '{"ok":false,"description":"chat not found"}';
  const refused = await app.inject({ method: 'POST', url: '/api/notifications/channels/tg/test' });
  t.deepEqual(refused.json().error, 'Telegram answered ok=false: chat not found');
});

test('a receiver that never answers is cut at notifications.send_timeout_ms', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' }, notifications: { send_timeout_ms: 300 } } });
  const hanging = await startReceiver(t, { hang: true });
  const result = await channelTest(app, { name: 'hang', type: 'webhook', config: { url: hanging.url } });
  t.false(result.delivered);
  t.is(result.error, 'no answer within 300 ms');
});

const mailConfig = (port: number, security: string, extra: object = {}) => ({
  host: '127.0.0.1',
  port,
  security,
  from: 'stack@example.test',
  to: ['ops@example.test', 'oncall@example.test'],
  ...extra,
});

test('email: plain SMTP with AUTH; a wrong password is refused without the password in the error', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const smtp = await startSmtp(t, { user: 'mailer', password: 'smtp-pass-123' });
  const result = await channelTest(app, {
    name: 'mail',
    type: 'email',
    config: mailConfig(smtp.port, 'none', { username: 'mailer', password: 'smtp-pass-123' }),
  });
  t.true(result.delivered, String(result.error));
  const [mail] = smtp.mails;
  t.is(mail.from, 'stack@example.test');
  t.deepEqual(mail.to, ['ops@example.test', 'oncall@example.test']);
  t.is(mail.user, 'mailer');
  t.false(mail.secure);
  t.regex(mail.data, /^Subject: \[info\] Test message from Stack Manager \(mail\)/m);
  t.regex(mail.data, /X-Stack-Manager-Category: system/);

  const wrong = await channelTest(app, {
    name: 'mail wrong',
    type: 'email',
    config: mailConfig(smtp.port, 'none', { username: 'mailer', password: 'wrong-pass-456' }),
  });
  t.false(wrong.delivered);
  t.truthy(wrong.error);
  t.false(String(wrong.error).includes('wrong-pass-456'));
  t.is(smtp.mails.length, 1);
});

test('email: STARTTLS and implicit TLS with a self-signed certificate trusted through `ca`; unverified without it', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' }, notifications: { send_timeout_ms: 5000 } } });
  const tls = selfSigned();
  const starttls = await startSmtp(t, { tls, user: 'u', password: 'p' });
  const implicit = await startSmtp(t, { tls, secure: true });

  const viaStarttls = await channelTest(app, {
    name: 'starttls',
    type: 'email',
    config: mailConfig(starttls.port, 'starttls', { username: 'u', password: 'p', ca: tls.cert }),
  });
  t.true(viaStarttls.delivered, String(viaStarttls.error));
  t.true(starttls.mails[0].secure);
  t.is(starttls.mails[0].user, 'u');

  const viaTls = await channelTest(app, {
    name: 'tls',
    type: 'email',
    config: mailConfig(implicit.port, 'tls', { ca: tls.cert }),
  });
  t.true(viaTls.delivered, String(viaTls.error));
  t.true(implicit.mails[0].secure);

  const untrusted = await channelTest(app, {
    name: 'untrusted',
    type: 'email',
    config: mailConfig(implicit.port, 'tls'),
  });
  t.false(untrusted.delivered);
  t.regex(String(untrusted.error), /certificate/i);
  t.is(implicit.mails.length, 1);
});
