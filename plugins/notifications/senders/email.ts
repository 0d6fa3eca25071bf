/**
 * The email channel: one SMTP session per message through nodemailer, with implicit TLS (`tls`,
 * usually port 465), STARTTLS required (`starttls`, usually 587) or plain (`none`, which never
 * upgrades, for a relay on a private network). Certificates are verified; `ca` names a private CA.
 */
import { isIP } from 'node:net';
import { createTransport } from 'nodemailer';
import type { EmailConfig } from '../schemas.ts';
import type { OutgoingMessage } from './types.ts';

export async function sendEmail(
  config: EmailConfig,
  message: OutgoingMessage,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<void> {
  const transport = createTransport({
    host: config.host,
    port: config.port,
    secure: config.security === 'tls',
    requireTLS: config.security === 'starttls',
    ignoreTLS: config.security === 'none',
    auth: config.username ? { user: config.username, pass: config.password ?? '' } : undefined,
    // SNI takes names only; an address is verified against the certificate's IP entries
    tls: { ...(config.ca ? { ca: config.ca } : {}), ...(isIP(config.host) ? {} : { servername: config.host }) },
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    // nodemailer logs nothing unless asked; keep it so (its debug lines would carry AUTH exchanges)
    logger: false,
    debug: false,
  });
  const abort = () => transport.close();
  signal.addEventListener('abort', abort, { once: true });
  try {
    await transport.sendMail({
      from: config.from,
      to: config.to,
      subject: `[${message.severity}] ${message.title}`,
      text: `${message.body}\n\n— Stack Manager · ${message.category} · ${message.severity} · ${message.at}\n`,
      headers: { 'X-Stack-Manager-Category': message.category, 'X-Stack-Manager-Severity': message.severity },
    });
    if (signal.aborted) throw new Error('the send was abandoned (time limit or shutdown)');
  } finally {
    signal.removeEventListener('abort', abort);
    transport.close();
  }
}
