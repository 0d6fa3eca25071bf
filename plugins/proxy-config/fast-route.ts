/**
 * The provider GET served before Fastify (core/fast-routes.ts, issue 11): the same answer as the
 * Fastify route (index.ts) for the requests Traefik sends — no query, JSON or YAML by Accept, gzip
 * or not, If-None-Match — written with one writeHead of header lists prepared per generation and
 * encoding. Anything else (a query string, HEAD, no config yet) is declined and Fastify answers.
 * test/proxy-config/fast-route.test.ts compares both answers header by header.
 */
import type { ServerResponse } from 'node:http';
import { API_VERSION } from '../../core/versioning.ts';
import type { FastRoute } from '../../core/fast-routes.ts';
import { providerHeaders, type HeaderSet } from './headers.ts';
import { acceptsGzip, matchesIfNoneMatch, wantsYaml } from './negotiate.ts';
import type { Encoded } from './service.ts';
import type { Servable } from './snapshot.ts';

type Served = () => { generation: Servable; stale: boolean } | null;

/**
 * `[name, value, …]` for writeHead, the request id's value last. The list is shared by every
 * request of its generation: the id slot is filled right before writeHead, which copies the list
 * into the header block synchronously, so no request can see another's id.
 */
type HeaderList = string[];

interface Lists {
  notModified: HeaderList;
  plain: HeaderList;
  gzip: HeaderList | null;
}

/** Per encoded body: [fresh, stale]; dropped with the generation that owns the body. */
const cache = new WeakMap<Encoded, [Lists | undefined, Lists | undefined]>();

function list(set: HeaderSet, contentLength: number | null): HeaderList {
  const out: HeaderList = ['api-version', API_VERSION];
  for (const [name, value] of Object.entries(set)) out.push(name, value);
  if (contentLength !== null) out.push('content-length', String(contentLength));
  out.push('x-request-id', '');
  return out;
}

function listsFor(generation: Servable, encoded: Encoded, yaml: boolean, stale: boolean): Lists {
  let entry = cache.get(encoded);
  if (!entry) cache.set(encoded, (entry = [undefined, undefined]));
  const slot = stale ? 1 : 0;
  let lists = entry[slot];
  if (!lists) {
    const sets = providerHeaders(generation, encoded, yaml, stale);
    entry[slot] = lists = {
      notModified: list(sets.notModified, null),
      plain: list(sets.plain, encoded.body.length),
      gzip: null,
    };
  }
  // the gzip form is compressed after the generation is published: its list follows once it exists
  if (lists.gzip === null && encoded.gzip !== null) {
    const sets = providerHeaders(generation, encoded, yaml, stale);
    lists.gzip = list(sets.gzip, encoded.gzip.length);
  }
  return lists;
}

function send(res: ServerResponse, status: number, headers: HeaderList, requestId: string, body?: Buffer): true {
  headers[headers.length - 1] = requestId;
  res.writeHead(status, headers);
  res.end(body);
  return true;
}

/** Records a poll for the status's instances (targets/setup.ts): remote address, User-Agent, ETag, YAML, 304. */
export type PollRecorder = (
  remoteAddress: string,
  userAgent: string,
  etag: string,
  yaml: boolean,
  notModified: boolean,
) => void;

export function fastProviderRoute(served: Served, onPoll: PollRecorder): FastRoute {
  return (req, res, requestId) => {
    const current = served();
    if (current === null) return false; // the 502 and its log line: Fastify's error handler
    const { generation, stale } = current;
    const yaml = wantsYaml(req.headers.accept);
    const encoded = yaml ? generation.yaml : generation.json;
    const lists = listsFor(generation, encoded, yaml, stale);
    // the provider token has no name; core/fast-routes.ts declines requests behind a trusted proxy
    const notModified = matchesIfNoneMatch(req.headers['if-none-match'], encoded.etag);
    onPoll(req.socket.remoteAddress ?? '', req.headers['user-agent'] ?? '', encoded.etag, yaml, notModified);
    if (notModified) return send(res, 304, lists.notModified, requestId);
    if (lists.gzip !== null && acceptsGzip(req.headers['accept-encoding']))
      return send(res, 200, lists.gzip, requestId, encoded.gzip!);
    return send(res, 200, lists.plain, requestId, encoded.body);
  };
}
