/**
 * The Proxy explorer (API.md §4.7): read-only views of the Traefik API of the selected data source.
 * Objects pass through as Traefik sends them; combined answers report the parts that failed.
 */
import type { Outcome } from './answer-cache.ts';
import { proxyErrors, type PartError } from './errors.ts';
import type { VersionView } from './schemas.ts';
import type { TraefikUpstream } from './source-select.ts';
import type { TraefikItem, TraefikReader } from './traefik-reader.ts';

export type ListKind = 'routers' | 'services' | 'middlewares';
export type Protocol = 'http' | 'tcp' | 'udp';

export const LIST_KINDS: ListKind[] = ['routers', 'services', 'middlewares'];
const PROTOCOLS: Protocol[] = ['http', 'tcp', 'udp'];

/** Query filters of the list routes: `search` goes to Traefik, `provider` is matched exactly here. */
export interface ListFilter {
  search?: string;
  provider?: string;
}

export interface AllListsBody {
  http: TraefikItem[];
  tcp: TraefikItem[];
  udp: TraefikItem[];
  errors: PartError[];
}

type Lists<K extends string> = Record<K, TraefikItem[] | null>;

export interface DataBodyView {
  overview: TraefikItem | null;
  version: VersionView | null;
  entrypoints: TraefikItem[] | null;
  http: Lists<ListKind>;
  tcp: Lists<ListKind>;
  udp: Lists<'routers' | 'services'>;
  errors: PartError[];
}

export interface ProxyExplorerOptions {
  /** The Traefik data source to read now (API.md §4.7 "Upstream"), or null when there is none. */
  select: () => TraefikUpstream | null;
  reader: TraefikReader;
}

/** Traefik has no UDP middlewares: that list is always empty and never asked for. */
const exists = (protocol: Protocol, kind: ListKind): boolean => !(protocol === 'udp' && kind === 'middlewares');
const pathOf = (protocol: Protocol, kind: ListKind): string => `/api/${protocol}/${kind}`;
const byProvider = (items: TraefikItem[], provider?: string): TraefikItem[] =>
  provider === undefined ? items : items.filter((item) => item.provider === provider);
const stringOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** Answers the explorer routes; throws 503 `not_configured` without a Traefik source and 502 when Traefik fails. */
export class ProxyExplorer {
  private readonly select: () => TraefikUpstream | null;
  private readonly reader: TraefikReader;

  constructor(options: ProxyExplorerOptions) {
    ({ select: this.select, reader: this.reader } = options);
  }

  /** GET /api/proxy/overview: Traefik's body unchanged. */
  async overview(): Promise<TraefikItem> {
    const upstream = this.upstream();
    return this.valueOf(upstream, await this.reader.object(upstream, '/api/overview'));
  }

  /** GET /api/proxy/version. */
  async version(): Promise<VersionView> {
    const upstream = this.upstream();
    return this.valueOf(upstream, await this.readVersion(upstream));
  }

  /** GET /api/proxy/entrypoints: the whole list in Traefik's order. */
  async entrypoints(): Promise<TraefikItem[]> {
    const upstream = this.upstream();
    return this.valueOf(upstream, await this.reader.list(upstream, '/api/entrypoints'));
  }

  /** One protocol's list of `kind`, filtered by provider. */
  async list(kind: ListKind, protocol: Protocol, filter: ListFilter): Promise<TraefikItem[]> {
    const upstream = this.upstream();
    if (!exists(protocol, kind)) return [];
    return byProvider(
      this.valueOf(upstream, await this.reader.list(upstream, pathOf(protocol, kind), filter.search)),
      filter.provider,
    );
  }

  /** `type=all`: the three lists read in parallel; a failed one is `[]` plus an `errors` item; 502 if all failed. */
  async listAll(kind: ListKind, filter: ListFilter): Promise<AllListsBody> {
    const upstream = this.upstream();
    const protocols = PROTOCOLS.filter((protocol) => exists(protocol, kind));
    const outcomes = await Promise.all(
      protocols.map((protocol) => this.reader.list(upstream, pathOf(protocol, kind), filter.search)),
    );
    const body: AllListsBody = { http: [], tcp: [], udp: [], errors: [] };
    outcomes.forEach((outcome, i) => {
      if (outcome.ok) body[protocols[i]] = byProvider(outcome.value, filter.provider);
      else body.errors.push({ endpoint: pathOf(protocols[i], kind), message: outcome.error });
    });
    if (body.errors.length === protocols.length) throw proxyErrors.allFailed(upstream.name, body.errors);
    return body;
  }

  /** GET /api/proxy/data: every part in parallel; a failed part is null plus an `errors` item; 502 if all failed. */
  async data(): Promise<DataBodyView> {
    const upstream = this.upstream();
    const lists = PROTOCOLS.flatMap((protocol) =>
      LIST_KINDS.filter((kind) => exists(protocol, kind)).map((kind) => pathOf(protocol, kind)),
    );
    const reads: Array<[string, Promise<Outcome<unknown>>]> = [
      ['/api/overview', this.reader.object(upstream, '/api/overview')],
      ['/api/version', this.readVersion(upstream)],
      ['/api/entrypoints', this.reader.list(upstream, '/api/entrypoints')],
      ...lists.map((path): [string, Promise<Outcome<unknown>>] => [path, this.reader.list(upstream, path)]),
    ];
    const outcomes = await Promise.all(reads.map(([, read]) => read));
    const values = new Map<string, unknown>();
    const errors: PartError[] = [];
    // `errors` follows the order of the body, whatever failed first
    outcomes.forEach((outcome, i) => {
      const endpoint = reads[i][0];
      values.set(endpoint, outcome.ok ? outcome.value : null);
      if (!outcome.ok) errors.push({ endpoint, message: outcome.error });
    });
    if (errors.length === reads.length) throw proxyErrors.allFailed(upstream.name, errors);
    const group = (protocol: Protocol) =>
      Object.fromEntries(
        LIST_KINDS.filter((kind) => exists(protocol, kind)).map((kind) => [kind, values.get(pathOf(protocol, kind))]),
      );
    return {
      overview: values.get('/api/overview') as TraefikItem | null,
      version: values.get('/api/version') as VersionView | null,
      entrypoints: values.get('/api/entrypoints') as TraefikItem[] | null,
      http: group('http') as Lists<ListKind>,
      tcp: group('tcp') as Lists<ListKind>,
      udp: group('udp') as Lists<'routers' | 'services'>,
      errors,
    };
  }

  private upstream(): TraefikUpstream {
    const upstream = this.select();
    if (!upstream) throw proxyErrors.noSource();
    return upstream;
  }

  private valueOf<T>(upstream: TraefikUpstream, outcome: Outcome<T>): T {
    if (!outcome.ok) throw proxyErrors.upstream(upstream.name, outcome.error);
    return outcome.value;
  }

  /** `/api/version` as `{version, codename, start_date}`; a body without a `Version` string is unusable. */
  private async readVersion(upstream: TraefikUpstream): Promise<Outcome<VersionView>> {
    const outcome = await this.reader.object(upstream, '/api/version');
    if (!outcome.ok) return outcome;
    const { Version, Codename, startDate } = outcome.value;
    if (typeof Version !== 'string') return { ok: false, error: 'Traefik sent /api/version without a Version string' };
    return {
      ok: true,
      value: { version: Version, codename: stringOrNull(Codename), start_date: stringOrNull(startDate) },
    };
  }
}
