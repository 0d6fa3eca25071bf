/**
 * Audit trail of write requests (API.md §2.11): one JSON line per non-GET/HEAD request in data/audit.log,
 * rotated at 10 MiB keeping audit.log.1 … .5. The one file write outside the YAML store that §3.1 allows.
 */
import { appendFile, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export const AUDIT_FILE = 'audit.log';
export const AUDIT_MAX_BYTES = 10 * 1024 * 1024;
export const AUDIT_KEEP = 5;

export interface AuditEntry {
  ts: string;
  actor: string;
  ip: string;
  method: string;
  path: string;
  status: number;
  object_id: string | null;
  request_id: string;
}

export interface AuditLogger {
  error(obj: object, msg: string): void;
}

/** Query keys whose values never reach the audit log. */
const SECRET_QUERY_KEY = /^(access_token|token|password|passwd|secret|api_?key|key)$/i;

/** The request path with secret query values replaced by `***`. */
export function redactQuery(url: string): string {
  const start = url.indexOf('?');
  if (start < 0) return url;
  const pairs = url
    .slice(start + 1)
    .split('&')
    .map((pair) => {
      const [key, ...value] = pair.split('=');
      let name = key;
      try {
        name = decodeURIComponent(key.replaceAll('+', ' '));
      } catch {
        // an undecodable key is compared as sent
      }
      return value.length > 0 && SECRET_QUERY_KEY.test(name) ? `${key}=***` : pair;
    });
  return `${url.slice(0, start + 1)}${pairs.join('&')}`;
}

/** Appends lines through one in-process queue, so concurrent requests never interleave, and rotates by size. */
export class AuditLog {
  private tail: Promise<void> = Promise.resolve();

  constructor(
    readonly file: string,
    private readonly log: AuditLogger,
    private readonly maxBytes = AUDIT_MAX_BYTES,
    private readonly keep = AUDIT_KEEP,
  ) {}

  /** Queues one entry; write errors are logged, never thrown into the request. */
  append(entry: AuditEntry): void {
    const line = `${JSON.stringify(entry)}\n`;
    this.tail = this.tail
      .then(() => this.write(line))
      .catch((err) => this.log.error({ err, file: this.file }, 'failed to append to the audit log'));
  }

  /** Resolves once every queued entry is on disk. */
  async flush(): Promise<void> {
    await this.tail;
  }

  private async write(line: string): Promise<void> {
    const size = await stat(this.file).then(
      (s) => s.size,
      () => 0,
    );
    if (size > 0 && size + Buffer.byteLength(line) > this.maxBytes) await this.rotate();
    await appendFile(this.file, line, { mode: 0o644 });
  }

  /** audit.log → .1 → .2 … ; the oldest (.keep) is dropped. */
  private async rotate(): Promise<void> {
    await unlink(`${this.file}.${this.keep}`).catch(() => undefined);
    for (let n = this.keep - 1; n >= 1; n--)
      await rename(`${this.file}.${n}`, `${this.file}.${n + 1}`).catch(() => undefined);
    await rename(this.file, `${this.file}.1`);
  }
}

const CREATED_BODY = Symbol('audit.createdBody');
/** A 201 body larger than this is not parsed for its id (creations answer with one object). */
const CREATED_BODY_MAX = 256 * 1024;

/** onSend hook: keeps a 201's serialized body on the request, read by objectIdOf() only when the Location does not name the object. */
export function keepCreatedBody(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (err: null, payload: unknown) => void,
): void {
  if (reply.statusCode === 201 && typeof payload === 'string')
    (request as unknown as Record<symbol, string>)[CREATED_BODY] = payload;
  done(null, payload);
}

/** The `id` (else `name`) of a 201's JSON body, kept by keepCreatedBody(). */
function createdBodyId(request: FastifyRequest): string | null {
  const body = (request as unknown as Record<symbol, string | undefined>)[CREATED_BODY];
  if (body === undefined || body.length > CREATED_BODY_MAX) return null;
  try {
    const value = JSON.parse(body) as Record<string, unknown> | null;
    for (const key of ['id', 'name'])
      if (typeof value?.[key] === 'string' || typeof value?.[key] === 'number') return String(value[key]);
  } catch {
    // not JSON: no id
  }
  return null;
}

/**
 * `:id` / `:name` of the route; for a 201, the created object: the last segment of its Location, or,
 * when the Location is a filtered list (`/api/ip/decisions?value=…`) or missing, the body's `id`/`name`.
 */
export function objectIdOf(request: FastifyRequest, reply: FastifyReply): string | null {
  const params = (request.params ?? {}) as Record<string, unknown>;
  for (const key of ['id', 'name']) if (typeof params[key] === 'string') return params[key] as string;
  if (reply.statusCode !== 201) return null;
  const location = reply.getHeader('location');
  if (typeof location !== 'string' || location.includes('?')) return createdBodyId(request);
  const last = location.split('/').filter(Boolean).pop();
  if (!last) return createdBodyId(request);
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

/** The audit line of a finished request (also the history's commit message for it). */
export function auditEntryOf(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  objectId: string | null,
): AuditEntry {
  return {
    ts: app.now().toISOString(),
    actor: request.principal?.name ?? 'anonymous',
    ip: request.ip,
    method: request.method,
    path: redactQuery(request.url),
    status: reply.statusCode,
    object_id: objectId,
    request_id: String(request.id),
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Pending audit lines; `flush()` resolves once they are written (tests, shutdown). */
    audit: { flush(): Promise<void> };
  }
}

/** Records every write request after its reply, when `audit.enabled`. */
async function audit(app: FastifyInstance): Promise<void> {
  const log = new AuditLog(path.join(app.store.dataDir, AUDIT_FILE), app.log);
  app.decorate('audit', {
    // One macrotask turn first: onResponse hooks of replies that just finished have then run and queued their line.
    flush: async () => {
      await new Promise((resolve) => setImmediate(resolve));
      await log.flush();
    },
  });
  app.addHook('onClose', async () => log.flush());
  if (!app.config.audit.enabled) return;

  app.addHook('onSend', keepCreatedBody);

  // callback style: it runs after every request, reads included, so no promise per request
  app.addHook('onResponse', (request, reply, done) => {
    // Reads are not audited; OPTIONS is a CORS preflight, not a write.
    if (
      request.method === 'GET' ||
      request.method === 'HEAD' ||
      request.method === 'OPTIONS' ||
      request.routeOptions.config?.audit === false
    ) {
      done();
      return;
    }
    log.append(auditEntryOf(app, request, reply, objectIdOf(request, reply)));
    done();
  });
}

export default fp(audit, {
  name: 'audit',
  dependencies: ['auth'],
  decorators: { fastify: ['config', 'store', 'now'] },
});
