/**
 * What the server answers while the first app instance is being built (issue 11): the provider
 * paths serve the config snapshot of the last run (stale, API.md §4.9: ETag, 304, gzip,
 * `X-Config-Stale: true`, provider.token checked), `/api/health` answers 503 `starting` (readiness:
 * not every route is served yet, API.md §4.1), `/api/health/live` 200 (liveness), anything else 503
 * `unhealthy`, all with Retry-After. Plain node:http: the app (and its store) does not exist yet.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzip as zlibGzip } from 'node:zlib';
import { PROVIDER_PATHS, type ConfigSnapshot } from './config-snapshot.ts';
import { APP_VERSION, uptimeSeconds } from './version.ts';

const JSON_TYPE = 'application/json; charset=utf-8';
const sha = (s: string) => createHash('sha256').update(s).digest();

export function earlyHandler(
  snapshot: ConfigSnapshot | null,
  providerToken: string,
): (req: IncomingMessage, res: ServerResponse) => void {
  // compressed on the thread pool, not before the socket listens (5 MB at 10,000 resources): until
  // it is ready the plain form is served, as Accept-Encoding allows
  let gzip: Buffer | null = null;
  if (snapshot && snapshot.body.length > 1024)
    zlibGzip(snapshot.body, (err, zipped) => {
      if (!err) gzip = zipped;
    });
  const common = (_req: IncomingMessage) => ({ 'api-version': '1', 'x-request-id': randomUUID(), vary: 'Accept' });
  const json = (
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    body: unknown,
    extra: Record<string, string> = {},
  ) => {
    const data = JSON.stringify(body);
    res
      .writeHead(status, {
        ...common(req),
        'content-type': JSON_TYPE,
        'content-length': Buffer.byteLength(data),
        ...extra,
      })
      .end(req.method === 'HEAD' ? undefined : data);
  };
  return (req, res) => {
    const url = (req.url ?? '/').split('?')[0];
    const read = req.method === 'GET' || req.method === 'HEAD';
    if (read && url === '/api/health/live') {
      json(req, res, 200, { status: 'starting', version: APP_VERSION, uptime_s: uptimeSeconds() });
      return;
    }
    // readiness: a script, compose's service_healthy or a probe that waits for 200 must never
    // meet a 503 afterwards, so 200 comes from the app only, once every route is served
    if (read && url === '/api/health') {
      json(
        req,
        res,
        503,
        {
          id: 'starting',
          message: 'the server is starting: the API is not served yet',
          status: 'starting',
          version: APP_VERSION,
          uptime_s: uptimeSeconds(),
        },
        { 'retry-after': '1' },
      );
      return;
    }
    const query = (req.url ?? '').includes('?') ? (req.url ?? '').slice((req.url ?? '').indexOf('?')) : '';
    // YAML and other negotiations need the app: only plain JSON requests are served from the snapshot
    const plain = query === '' || query === '?format=json';
    if (snapshot && read && PROVIDER_PATHS.includes(url) && plain && !/yaml/i.test(String(req.headers.accept ?? ''))) {
      if (providerToken !== '') {
        const match = /^Bearer +(\S+)$/i.exec(String(req.headers.authorization ?? ''));
        if (!match || !timingSafeEqual(sha(match[1]), sha(providerToken))) {
          json(
            req,
            res,
            503,
            { id: 'unhealthy', message: 'the server is starting: only provider.token requests are served yet' },
            { 'retry-after': '1' },
          );
          return;
        }
      }
      const headers: Record<string, string | number> = {
        ...common(req),
        etag: snapshot.etag,
        'cache-control': 'no-cache',
        vary: 'Accept, Accept-Encoding',
        'x-config-generated-at': snapshot.generatedAt,
        'x-config-stale': 'true',
      };
      const tags = String(req.headers['if-none-match'] ?? '')
        .split(',')
        .map((t) => t.trim().replace(/^W\//, ''));
      if (tags.includes(snapshot.etag) || tags.includes('*')) {
        res.writeHead(304, headers).end();
        return;
      }
      const accept = String(req.headers['accept-encoding'] ?? '');
      const ready = gzip;
      const zipped = ready !== null && /\bgzip\b/i.test(accept) && !/\bgzip\s*;\s*q=0(\.0*)?\s*(,|$)/i.test(accept);
      const body = zipped ? ready : snapshot.body;
      res
        .writeHead(200, {
          ...headers,
          'content-type': JSON_TYPE,
          'content-length': body.length,
          ...(zipped ? { 'content-encoding': 'gzip' } : {}),
        })
        .end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    json(req, res, 503, { id: 'unhealthy', message: 'the server is starting' }, { 'retry-after': '1' });
  };
}
