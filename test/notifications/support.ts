/** Real receivers on 127.0.0.1 for the notification tests: an HTTP server that records requests, an SMTP server. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { ExecutionContext } from 'ava';
import type { FastifyInstance } from 'fastify';
import forge from 'node-forge';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What the receiver answers; tests change it while it runs. */
export interface Behaviour {
  status: number;
  body: string;
  /** Never answer (the sender's time limit must cut it). */
  hang: boolean;
}

export interface Receiver {
  url: string;
  received: Received[];
  behaviour: Behaviour;
  close(): Promise<void>;
}

/** An HTTP server that records every request and answers as `behaviour` says; closed when the test ends. */
export async function startReceiver(t: ExecutionContext, behaviour: Partial<Behaviour> = {}): Promise<Receiver> {
  const received: Received[] = [];
  const state: Behaviour = { status: 200, body: '', hang: false, ...behaviour };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      });
      if (state.hang) return;
      res.writeHead(state.status, { 'content-type': state.body.startsWith('{') ? 'application/json' : 'text/plain' });
      res.end(state.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  t.teardown(close);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, behaviour: state, close };
}

/** A self-signed certificate for 127.0.0.1 / localhost (node-forge). */
export function selfSigned(): { key: string; cert: string } {
  const keys = forge.pki.rsa.generateKeyPair(2048);
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 86_400_000);
  const attrs = [{ name: 'commonName', value: '127.0.0.1' }];
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true },
    {
      name: 'subjectAltName',
      altNames: [
        { type: 7, ip: '127.0.0.1' },
        { type: 2, value: 'localhost' },
      ],
    },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return { key: forge.pki.privateKeyToPem(keys.privateKey), cert: forge.pki.certificateToPem(cert) };
}

export interface Mail {
  from: string;
  to: string[];
  user: string | null;
  secure: boolean;
  data: string;
}

/** A real SMTP server (smtp-server) that accepts `user`/`password` and records mails. */
export async function startSmtp(
  t: ExecutionContext,
  options: { secure?: boolean; tls?: { key: string; cert: string }; user?: string; password?: string } = {},
): Promise<{ port: number; mails: Mail[] }> {
  const mails: Mail[] = [];
  const config: SMTPServerOptions = {
    secure: options.secure ?? false,
    ...(options.tls ? { key: options.tls.key, cert: options.tls.cert } : {}),
    disabledCommands: options.tls ? [] : ['STARTTLS'],
    authOptional: options.user === undefined,
    allowInsecureAuth: options.tls === undefined,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === options.user && auth.password === options.password)
        return callback(null, { user: auth.username });
      return callback(new Error(`Invalid username or password for ${auth.username}`));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          user: (session.user as string | undefined) ?? null,
          secure: session.secure,
          data: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  };
  const server = new SMTPServer(config);
  // a client that gives up (an untrusted certificate) is an error event of the server: expected here
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.server.address() as AddressInfo).port, mails };
}

export function captureLog(): { lines: string[]; logStream: Writable } {
  const lines: string[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, logStream };
}

export function fakeClock(iso: string) {
  let ms = Date.parse(iso);
  return { now: () => new Date(ms), advance: (by: number) => (ms += by), set: (at: string) => (ms = Date.parse(at)) };
}

export async function addChannel(app: FastifyInstance, payload: object): Promise<string> {
  const response = await app.inject({ method: 'POST', url: '/api/notifications/channels', payload });
  if (response.statusCode !== 201) throw new Error(response.body);
  return response.json().id;
}

export async function history(app: FastifyInstance, query = ''): Promise<Array<Record<string, unknown>>> {
  return (await app.inject({ url: `/api/notifications/history${query}` })).json();
}

/**
 * Test settings: the default data source (http://pangolin:3001) is unreachable here, and a clock
 * moved by hours would report it (proxy, error) into the channels under test.
 */
export const quietUpstream = { upstream_down_after_s: 86_400 };
