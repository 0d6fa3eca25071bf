/**
 * One read of a Traefik instance for the live check (API.md §4.19): `/api/version`, the entry
 * points and every router, service and middleware list (all pages), in parallel. The instance is
 * reachable when every list reads; a failed `/api/version` alone leaves only the version unknown. Lists are hashed
 * while they are read, so a check can tell "nothing changed" without comparing anything.
 */
import { createHash } from 'node:crypto';
import { fetchTraefikList, fetchTraefikObject, type UpstreamSource } from '../../datasource/index.ts';
import type { InstanceReading, TraefikObject } from '../../../model/live/types.ts';

/** The lists a check reads, in the order their hashes enter the fingerprint. */
export const LIVE_LISTS = [
  '/api/entrypoints',
  '/api/http/routers',
  '/api/http/services',
  '/api/http/middlewares',
  '/api/tcp/routers',
  '/api/tcp/services',
  '/api/tcp/middlewares',
  '/api/udp/routers',
  '/api/udp/services',
] as const;

export interface Read {
  reading: InstanceReading;
  /** hash of the version answer and every list's bytes; null when unreachable */
  fingerprint: string | null;
}

/** Reads everything; never throws (an unreachable instance is a reading with `reachable: false`). */
export async function readInstance(
  name: string,
  source: UpstreamSource,
  signal: AbortSignal,
  now: () => number,
): Promise<Read> {
  const [version, ...lists] = await Promise.all([
    fetchTraefikObject(source, '/api/version', { signal }),
    ...LIVE_LISTS.map((path) => fetchTraefikList(source, path, { signal, hash: true })),
  ]);
  const reading: InstanceReading = {
    source: name,
    reachable: true,
    error: null,
    version: null,
    start_date: null,
    version_error: null,
    entrypoints: [],
    http: { routers: [], services: [], middlewares: [] },
    tcp: { routers: [], services: [], middlewares: [] },
    udp: { routers: [], services: [] },
    read_at: now(),
  };
  // the lists decide whether the instance is read: an operator's router to api@internal may let
  // only them through (Traefik answers 404 at /api/version), which leaves the version unknown
  const failure = lists.find((result) => !result.ok);
  if (failure && !failure.ok)
    return { reading: { ...reading, reachable: false, error: failure.error }, fingerprint: null };
  const fingerprint = createHash('sha1');
  if (version.ok) {
    const { Version, startDate } = version.body;
    reading.version = typeof Version === 'string' && Version !== '' ? Version : null;
    reading.start_date = typeof startDate === 'string' ? startDate : null;
    fingerprint.update(`${reading.version}\n${reading.start_date}\n`);
  } else {
    reading.version_error = version.error;
    fingerprint.update(`version failed: ${version.error}\n`);
  }
  const items: TraefikObject[][] = [];
  for (const result of lists) {
    if (!result.ok) continue; // not reached: a failure returned above
    items.push(result.items);
    fingerprint.update(`${result.hash}\n`);
  }
  const [
    entrypoints,
    httpRouters,
    httpServices,
    httpMiddlewares,
    tcpRouters,
    tcpServices,
    tcpMiddlewares,
    udpRouters,
    udpServices,
  ] = items;
  reading.entrypoints = entrypoints.map((entry) => entry.name).filter((n): n is string => typeof n === 'string');
  reading.http = { routers: httpRouters, services: httpServices, middlewares: httpMiddlewares };
  reading.tcp = { routers: tcpRouters, services: tcpServices, middlewares: tcpMiddlewares };
  reading.udp = { routers: udpRouters, services: udpServices };
  return { reading, fingerprint: fingerprint.digest('hex') };
}
