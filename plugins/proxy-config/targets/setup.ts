/**
 * Wires provider targets into the proxy-config group: the `targets` collection, its service, the
 * prepared documents (rebuilt after each default generation and target change), the poller log,
 * the middlewares group's reference source, and the status part.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { DanglingReference } from '../../../model/generate/generate.ts';
import { withoutProvider } from '../../../model/generate/generate-support.ts';
import { isObject } from '../../../core/ids.ts';
import type { JsonObject } from '../../../model/types.ts';
import type { ResourceRecord } from '../../../model/upstream-routers.ts';
import type { ConfigProvider } from '../service.ts';
import type { Servable } from '../snapshot.ts';
import { TargetDocuments } from './documents.ts';
import { RESERVED_IDS } from './errors.ts';
import { PollerLog, type InstanceView } from './pollers.ts';
import { TargetFile, type TargetData } from './schemas.ts';
import { TargetService } from './service.ts';
import type { DroppedKey } from '../version-gate.ts';

/** The slug pattern of API.md §2.8 minus the reserved ids: a hand-made `data/targets/status.yaml` is reported invalid. */
const TARGET_ID = new RegExp(`^(?!(?:${[...RESERVED_IDS].join('|')})$)[a-z0-9][a-z0-9-]{0,62}$`);

export interface Targets {
  service: TargetService;
  documents: TargetDocuments;
  pollers: PollerLog;
  close(): void;
}

export async function setupTargets(
  app: FastifyInstance,
  provider: ConfigProvider,
  defaultVersion: () => string | null = () => null,
): Promise<Targets> {
  const log = app.log.child({ component: 'proxy-config' });
  const service = new TargetService({
    resourceExists: (id) => app.resources.get(id) !== undefined,
    middlewareExists: (id) => app.middlewares.has(id),
    urlOf: (id) => `/api/v1/proxy-config/${id}`,
  });
  const collection = await app.store.collection<TargetData>({
    name: 'targets',
    schema: TargetFile,
    idPattern: TARGET_ID,
    check: (id, data) => service.checkFile(id, data),
  });
  service.attach(collection);
  const pollers = new PollerLog(() => app.now().getTime());
  const documents = new TargetDocuments({
    defaultConfig: () => provider.current()?.result.config ?? null,
    targets: () => service.records(),
    resourceRouters: (config) => resourceRouters(app.resources.list(), config),
    defaultVersion,
    now: app.now,
    onChanged: (id, document) =>
      app.events.publish('provider', {
        etag: document.json.etag.slice(1, -1),
        generated_at: document.generatedAt,
        target: id,
      }),
    onError: (err, id) => log.error({ err, target: id }, 'target document generation failed'),
  });
  const unsubscribe = [
    app.middlewares.addReferenceSource({
      referrers: (id) => service.middlewareReferrers(id),
      removeReferences: (id) => service.dropMiddleware(id),
    }),
    provider.onGenerated(() => documents.invalidate()),
    // which routers a resource id owns can change without the default bytes changing (a resource
    // discovered for a router that has no override yet), so resource changes rebuild too
    app.resources.onChange(() => documents.invalidate()),
    collection.onChange((event) => {
      if (event.type === 'delete') pollers.forget(event.id);
      documents.invalidate();
    }),
  ];
  return {
    service,
    documents,
    pollers,
    close: () => {
      for (const off of unsubscribe) off();
      documents.close();
    },
  };
}

/**
 * Router keys a resource owns in the default document: its router (Pangolin: the upstream key;
 * Traefik mode: our router named by the resource id), Pangolin's `<router>-redirect` companion
 * (the HTTP → HTTPS redirect of the same host) and its TCP router `<id>_tcp`.
 */
export function resourceRouters(records: readonly ResourceRecord[], config: JsonObject): Map<string, string[]> {
  const present = (key: string) =>
    ['http', 'tcp', 'udp'].some((protocol) => {
      const part = config[protocol];
      return isObject(part) && isObject(part.routers) && Object.hasOwn(part.routers, key);
    });
  const map = new Map<string, string[]>();
  for (const record of records) {
    const upstreamKey = withoutProvider(record.router || record.name);
    const candidates = [upstreamKey, `${upstreamKey}-redirect`, record.id, `${record.id}_tcp`];
    map.set(record.id, [...new Set(candidates)].filter(present));
  }
  return map;
}

/** Records who polled `document` and the ETag it got (on the provider's request path: no allocation beyond the log's key). */
export function recordPoll(
  targets: Targets,
  document: string,
  request: FastifyRequest,
  etag: string,
  yaml: boolean,
  notModified: boolean,
): void {
  targets.pollers.seen(
    document,
    request.ip,
    request.headers['user-agent'] ?? '',
    request.principal?.name ?? null,
    etag,
    yaml,
    notModified,
  );
}

/** Records a poll of `document` answered 502 because it has no document yet (status counts, API.md §2.11). */
export function recordUnavailablePoll(targets: Targets, document: string, request: FastifyRequest): void {
  targets.pollers.unavailable(
    document,
    request.ip,
    request.headers['user-agent'] ?? '',
    request.principal?.name ?? null,
  );
}

/**
 * Records a provider request refused with 401 (wrong or missing token) for the document it asked
 * for: `target` from the path or the `target` query, `default` without one; an unknown target is
 * not recorded (the instance log holds known documents only).
 */
export function recordRefusedPoll(targets: Targets, target: unknown, request: FastifyRequest): void {
  if (target !== undefined && (typeof target !== 'string' || !targets.service.has(target))) return;
  const document = target ?? 'default';
  const userAgent = request.headers['user-agent'] ?? '';
  if (targets.pollers.refused(document, request.ip, userAgent))
    // once per instance (address + User-Agent) while it stays in the poller window; the rest are
    // counted in the status's polls["401"] and logged at debug (API.md §2.11)
    request.log.warn(
      { document, remote_address: request.ip, user_agent: userAgent },
      'a provider poll was refused (wrong or missing provider token): check providers.http.headers of this Traefik',
    );
}

export interface TargetStatus {
  id: string;
  etag: string | null;
  generated_at: string | null;
  traefik_version: string | null;
  dropped_keys: DroppedKey[];
  instances: InstanceView[];
}

/** The status `targets` list: the default document first (id `default`), then every target by id. */
export function targetStatuses(
  targets: Targets,
  served: Servable | null,
  defaultVersion: string | null = null,
): TargetStatus[] {
  const entry = (
    id: string,
    document: Servable | null | undefined,
    version: string | null,
    dropped: DroppedKey[] | undefined,
  ): TargetStatus => ({
    id,
    etag: document ? document.json.etag.slice(1, -1) : null,
    generated_at: document?.generatedAt ?? null,
    traefik_version: version,
    dropped_keys: dropped ?? [],
    // a YAML poller compares with the YAML form (serialised once per document, here at the latest)
    instances: targets.pollers.instances(id, document ? (yaml) => (yaml ? document.yaml : document.json).etag : null),
  });
  const defaultDropped = served && 'dropped' in served ? (served.dropped as DroppedKey[]) : [];
  return [
    entry('default', served, defaultVersion, defaultDropped),
    ...targets.service.records().map((t) => {
      const document = targets.documents.get(t.id);
      return entry(t.id, document, t.data.traefik_version ?? defaultVersion, document?.dropped);
    }),
  ];
}

/** Dangling references of every target document (merged into the status list). */
export function targetDangling(targets: Targets): DanglingReference[] {
  return targets.service.records().flatMap((t) => targets.documents.get(t.id)?.dangling ?? []);
}
