/** Content negotiation of the provider endpoint: YAML on request, gzip when the client accepts it. */

/** True when the Accept header prefers YAML (application/yaml, application/x-yaml, text/yaml). */
export function wantsYaml(accept: string | undefined): boolean {
  return !!accept && /(^|,)\s*(application\/(x-)?yaml|text\/(x-)?yaml)\s*(;|,|$)/i.test(accept);
}

/** True when Accept-Encoding allows gzip (explicitly, or via `*`) with a non-zero q. */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  if (!header) return false;
  // Traefik's polls all send the same value: answered without splitting (issue 11, per-request cost)
  if (header === lastEncoding) return lastAcceptsGzip;
  const value = Array.isArray(header) ? header.join(',') : header;
  const accepted = parseAcceptsGzip(value);
  if (typeof header === 'string') {
    lastEncoding = header;
    lastAcceptsGzip = accepted;
  }
  return accepted;
}

let lastEncoding: string | undefined;
let lastAcceptsGzip = false;

function parseAcceptsGzip(value: string): boolean {
  let star: boolean | undefined;
  for (const part of value.split(',')) {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const allowed = q === undefined || Number(q.slice(2)) > 0;
    if (coding.trim() === 'gzip') return allowed;
    if (coding.trim() === '*') star = allowed;
  }
  return star ?? false;
}

/** True when an If-None-Match header value lists `etag` (quoted, weak or not) or is `*`. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === etag;
  });
}
