/** Content negotiation of the provider endpoint: YAML on request, gzip when the client accepts it. */

/** True when the Accept header prefers YAML (application/yaml, application/x-yaml, text/yaml). */
export function wantsYaml(accept: string | undefined): boolean {
  return !!accept && /(^|,)\s*(application\/(x-)?yaml|text\/(x-)?yaml)\s*(;|,|$)/i.test(accept);
}

/** True when Accept-Encoding allows gzip (explicitly, or via `*`) with a non-zero q. */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  if (!header) return false;
  const value = Array.isArray(header) ? header.join(',') : header;
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
