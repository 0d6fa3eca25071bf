/**
 * The provider endpoint's reply headers (API.md §4.9), built once per generation and encoding instead
 * of per request (issue 11: Traefik instances poll it constantly; a request should only pick bytes).
 */
import type { Encoded } from './service.ts';

type Generation = { readonly generatedAt: string };

export type HeaderSet = Record<string, string>;

export interface ProviderHeaders {
  /** 304: validators and caching headers, no content headers */
  notModified: HeaderSet;
  plain: HeaderSet;
  gzip: HeaderSet;
}

/** Per encoded body: [fresh, stale]; dropped with the generation that owns the body. */
const cache = new WeakMap<Encoded, [ProviderHeaders | undefined, ProviderHeaders | undefined]>();

function build(generation: Generation, encoded: Encoded, yaml: boolean, stale: boolean): ProviderHeaders {
  const notModified: HeaderSet = {
    etag: encoded.etag,
    'cache-control': 'no-cache',
    vary: 'Accept, Accept-Encoding',
    'x-config-generated-at': generation.generatedAt,
  };
  if (stale) notModified['x-config-stale'] = 'true';
  const plain = {
    ...notModified,
    'content-type': yaml ? 'application/yaml; charset=utf-8' : 'application/json; charset=utf-8',
  };
  return { notModified, plain, gzip: { ...plain, 'content-encoding': 'gzip' } };
}

export function providerHeaders(
  generation: Generation,
  encoded: Encoded,
  yaml: boolean,
  stale: boolean,
): ProviderHeaders {
  let entry = cache.get(encoded);
  if (!entry) cache.set(encoded, (entry = [undefined, undefined]));
  const slot = stale ? 1 : 0;
  return (entry[slot] ??= build(generation, encoded, yaml, stale));
}
