/**
 * The live checker (API.md §4.19): one per app, one check at a time per Traefik instance (every
 * `traefik`-type data source). A check runs `settle` after each new generation and every `interval`;
 * a check asked for while one runs runs once more after it. Results are kept until the next check;
 * a check whose reading and documents equal the previous one's reuses its results (no comparison).
 */
import {
  instanceStates,
  NOT_IN_DOCUMENT,
  resourceRouterName,
  runsDocument,
  worstState,
  type ExpectedDocument,
} from '../../../model/live/compare.ts';
import { droppedKeyFindings, instanceFindings, type DeclaredPluginKeys } from '../../../model/live/findings.ts';
import type {
  Diagnosis,
  Finding,
  FindingContribution,
  InstanceDiagnosis,
  InstanceReading,
  LiveState,
  ResourceLive,
} from '../../../model/live/types.ts';
import type { UpstreamSource } from '../../datasource/index.ts';
import { DocumentWindow, type GenerationLike } from './documents.ts';
import { readInstance, type Read } from './reading.ts';
import { NOT_CHECKED } from './schemas.ts';

type Document = InstanceDiagnosis['document'];

export interface LiveCheckerOptions {
  settleMs: number;
  intervalMs: number;
  now: () => Date;
  /** the `traefik`-type data sources, with credentials */
  sources: () => Array<{ name: string; source: UpstreamSource }>;
  /** every resource (id and upstream router key) */
  resources: () => ReadonlyArray<{ id: string; router: string }>;
  mode: () => 'pangolin' | 'traefik';
  /** true when `proxy.traefik_version` names the version (no version_unknown finding then) */
  versionSet: boolean;
  /** `proxy.traefik_version` as set ('' or absent: unset), named by document_behind when the instance runs another */
  versionSetting?: string;
  /** the plugin keys of Traefik's static config, or null when it cannot be read (plugins_disabled names what to vendor) */
  declaredPlugins?: () => DeclaredPluginKeys | null;
  publish: (type: 'live' | 'diagnosis', data: object) => void;
  log: { warn(obj: object, msg: string): void; debug(obj: object, msg: string): void };
  /** how an instance is read; default readInstance (HTTP) */
  read?: (name: string, source: UpstreamSource, signal: AbortSignal) => Promise<Read>;
}

/** One instance's latest check. */
interface InstanceResult {
  /** what the comparison depended on: equal key, equal results */
  key: string;
  reading: InstanceReading;
  states: Map<string, { state: LiveState; errors: string[] }>;
  findings: Finding[];
  checkedAt: string;
}

interface Instance {
  name: string;
  running: Promise<void> | null;
  again: boolean;
  abort: AbortController;
  result: InstanceResult | null;
  document: Document;
  since: string | null;
  /** the last of our documents this instance was seen running */
  taken: ExpectedDocument | null;
}

const SEVERITY_RANK = { error: 0, warning: 1, info: 2 } as const;

export class LiveChecker {
  private readonly window: DocumentWindow;
  private readonly instances = new Map<string, Instance>();
  private readonly closing = new AbortController();
  private intervalTimer: NodeJS.Timeout | null = null;
  private settleTimer: NodeJS.Timeout | null = null;
  /** a generation came while the settle timer was pending: check again at this time (epoch ms) */
  private settleDue: number | null = null;
  private resourcesEpoch = 0;
  private routerIndex: { inputs: string; key: string; map: Map<string, string> } | null = null;
  private routerMaps = 0;
  private overall = new Map<string, LiveState>();
  /** findings other groups contribute (FindingRegistry), by contributor name */
  private readonly contributed = new Map<string, () => Finding[]>();
  /** the findings last published, by id */
  private raised = new Map<string, Finding>();
  private closed = false;
  /** counters: checks run, and those that compared (the others reused the previous results) */
  readonly stats = { checks: 0, compared: 0 };

  constructor(private readonly options: LiveCheckerOptions) {
    this.window = new DocumentWindow(options.settleMs);
  }

  /** Starts the periodic checks (timers never keep the process alive). */
  start(): void {
    this.intervalTimer = setInterval(() => void this.checkAll(), this.options.intervalMs);
    this.intervalTimer.unref();
  }

  /** A new generation of the default document: kept, and a check is due `settle` later. */
  generated(generation: GenerationLike): void {
    if (this.closed) return;
    this.window.add(generation, this.nowMs());
    const due = this.nowMs() + this.options.settleMs;
    if (this.settleTimer) {
      this.settleDue = due;
      return;
    }
    this.scheduleSettle(this.options.settleMs);
  }

  /** Any resource changed (routers of resources may differ even with the same document bytes). */
  resourcesChanged(): void {
    this.resourcesEpoch += 1;
  }

  /** Checks every instance now (each after its running check) and resolves when all are done. */
  async checkAll(): Promise<void> {
    if (this.closed) return;
    this.syncInstances();
    await Promise.all([...this.instances.values()].map((instance) => this.check(instance)));
  }

  /** The Resource `live` field (§4.4). */
  resource(id: string): ResourceLive {
    if (this.instances.size === 0) return NOT_CHECKED;
    const instances = this.ordered().map((instance) => {
      const found = instance.result?.states.get(id);
      return {
        source: instance.name,
        state: found?.state ?? 'unknown',
        errors: found ? found.errors : instance.result ? [NOT_IN_DOCUMENT] : [],
        traefik_version: instance.result?.reading.version ?? null,
      };
    });
    return { state: worstState(instances.map((i) => i.state)), checked_at: this.checkedAt(), instances };
  }

  diagnosis(): Diagnosis {
    // configured instances are listed before their first check (document `unknown`), and removed ones go
    this.syncInstances();
    const instances = this.ordered().map((instance) => ({
      source: instance.name,
      reachable: instance.result?.reading.reachable ?? false,
      version: instance.result?.reading.version ?? null,
      document: instance.document,
      since: instance.since,
    }));
    return { checked_at: this.checkedAt(), instances, findings: this.findings() };
  }

  /** Another group's findings join every diagnosis; `changed()` publishes their raise/clear events. */
  contribute(name: string, findings: () => Finding[]): FindingContribution {
    this.contributed.set(name, findings);
    const current = () => this.contributed.get(name) === findings;
    if (!this.closed) this.publishChanges();
    return {
      changed: () => {
        if (current() && !this.closed) this.publishChanges();
      },
      remove: () => {
        if (!current()) return;
        this.contributed.delete(name);
        if (!this.closed) this.publishChanges();
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.intervalTimer) clearInterval(this.intervalTimer);
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.closing.abort();
    await Promise.all([...this.instances.values()].map((instance) => instance.running));
  }

  /** Instances by source name. */
  private ordered(): Instance[] {
    return [...this.instances.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  private nowMs(): number {
    return this.options.now().getTime();
  }

  private scheduleSettle(delayMs: number): void {
    this.settleTimer = setTimeout(() => {
      this.settleTimer = null;
      void this.checkAll();
      const due = this.settleDue;
      this.settleDue = null;
      if (due !== null && !this.closed) this.scheduleSettle(Math.max(0, due - this.nowMs()));
    }, delayMs);
    this.settleTimer.unref();
  }

  /** Instances follow the data sources: new `traefik` sources join, removed ones go (their check aborted). */
  private syncInstances(): void {
    const names = new Set(this.options.sources().map((s) => s.name));
    let removed = false;
    for (const [name, instance] of this.instances) {
      if (names.has(name)) continue;
      instance.abort.abort();
      this.instances.delete(name);
      removed = true;
    }
    for (const name of [...names].sort()) {
      if (!this.instances.has(name))
        this.instances.set(name, {
          name,
          running: null,
          again: false,
          abort: new AbortController(),
          result: null,
          document: 'unknown',
          since: null,
          taken: null,
        });
    }
    if (removed) this.publishChanges();
  }

  /** One check at a time: asked during a check, one more runs after it. */
  private check(instance: Instance): Promise<void> {
    if (instance.running) {
      instance.again = true;
      return instance.running;
    }
    instance.running = (async () => {
      try {
        do {
          instance.again = false;
          await this.checkOnce(instance);
        } while (instance.again && !this.closed && !instance.abort.signal.aborted);
      } finally {
        instance.running = null;
      }
    })();
    return instance.running;
  }

  private async checkOnce(instance: Instance): Promise<void> {
    const source = this.options.sources().find((s) => s.name === instance.name)?.source;
    if (!source) return;
    const signal = AbortSignal.any([this.closing.signal, instance.abort.signal]);
    const read = this.options.read ?? ((name, src, sig) => readInstance(name, src, sig, () => this.nowMs()));
    // checked_at is when Traefik was read: a reading that takes long is not dated after it
    const readAtMs = this.nowMs();
    let result: Read;
    try {
      result = await read(instance.name, source, signal);
    } catch (err) {
      this.options.log.warn({ err, source: instance.name }, 'reading Traefik for the live check failed');
      return;
    }
    if (this.closed || signal.aborted || this.instances.get(instance.name) !== instance) return;
    try {
      this.evaluate(instance, result, readAtMs);
    } catch (err) {
      this.options.log.warn({ err, source: instance.name }, 'live check failed');
      return;
    }
    this.publishChanges();
  }

  /** Compares the reading with our documents, unless nothing it depends on changed since the last check. */
  private evaluate(instance: Instance, { reading, fingerprint }: Read, readAtMs: number): void {
    const nowMs = this.nowMs();
    const kept = this.window.kept(nowMs);
    const accepted = this.window.accepted(nowMs);
    const latest = this.window.latest();
    const routerOf = this.routers(latest);
    const etags = (docs: ExpectedDocument[]) => docs.map((doc) => doc.etag).join(',');
    const declaredPlugins = this.options.declaredPlugins?.() ?? null;
    const key = [
      fingerprint ?? `unreachable:${reading.error}`,
      etags(kept),
      etags(accepted),
      routerOf.key,
      instance.taken?.etag ?? '',
      declaredPlugins ? `${declaredPlugins.remote.join(',')};${declaredPlugins.local.join(',')}` : '',
    ].join('|');
    this.stats.checks += 1;
    const checkedAt = new Date(readAtMs).toISOString();
    const previous = instance.result;
    if (previous && previous.key === key) {
      instance.result = { ...previous, reading, checkedAt };
      return;
    }
    this.stats.compared += 1;
    let document: Document = 'unknown';
    if (reading.reachable) {
      const running = kept.filter((doc) => runsDocument(reading, doc));
      document = running.length > 0 ? 'current' : 'behind';
      // documents that differ only inside a middleware or a service look alike in Traefik's API: the
      // one the instance was seen running stays taken while it still matches (a newer look-alike may
      // have been refused); otherwise the newest it runs
      const taken = instance.taken;
      const stays = taken !== null && (running.includes(taken) || runsDocument(reading, taken));
      if (running.length > 0 && !stays) instance.taken = running[0];
    }
    if (document !== instance.document) {
      instance.document = document;
      instance.since = checkedAt;
    }
    const states = instanceStates(reading, accepted, routerOf.map);
    const findings = instanceFindings({
      reading,
      document,
      latest,
      taken: instance.taken,
      routerOf: routerOf.map,
      versionKnown: reading.version !== null || this.options.versionSet,
      versionSetting: this.options.versionSetting || null,
      declaredPlugins,
    });
    instance.result = { key, reading, states, findings, checkedAt };
  }

  /**
   * Resource id → Traefik router name in the latest document, recomputed when it or the resources
   * change; its key changes only when the map does (a sync that rewrites nothing keeps it).
   */
  private routers(latest: ExpectedDocument | null): { key: string; map: Map<string, string> } {
    const mode = this.options.mode();
    const inputs = `${latest?.etag ?? ''}:${this.resourcesEpoch}:${mode}`;
    if (this.routerIndex?.inputs === inputs) return this.routerIndex;
    const map = new Map<string, string>();
    const outcomes = this.window.generation()?.result.resources ?? {};
    if (latest) {
      for (const resource of this.options.resources()) {
        const name = resourceRouterName(resource, outcomes[resource.id]?.emitted ?? false, mode, latest);
        if (name !== null) map.set(resource.id, name);
      }
    }
    const previous = this.routerIndex;
    const same = previous !== null && sameEntries(previous.map, map);
    this.routerIndex = { inputs, key: same ? previous.key : String(++this.routerMaps), map: same ? previous.map : map };
    return this.routerIndex;
  }

  private checkedAt(): string | null {
    let latest: string | null = null;
    for (const instance of this.instances.values()) {
      const at = instance.result?.checkedAt;
      if (at && (latest === null || at > latest)) latest = at;
    }
    return latest;
  }

  /** Every finding of the last checks plus the version gate's dropped keys, sorted (severity, kind, id). */
  private findings(): Finding[] {
    const all: Finding[] = [];
    for (const instance of this.instances.values()) if (instance.result) all.push(...instance.result.findings);
    const dropped = this.window.generation()?.dropped ?? [];
    if (dropped.length > 0) all.push(...droppedKeyFindings(dropped, this.routers(this.window.latest()).map));
    for (const [name, findings] of this.contributed) {
      try {
        all.push(...findings());
      } catch (err) {
        this.options.log.warn({ err, contributor: name }, 'a findings contributor failed');
      }
    }
    return all.sort(
      (a, b) =>
        SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] ||
        a.kind.localeCompare(b.kind) ||
        a.id.localeCompare(b.id),
    );
  }

  /** `live` events for each resource whose overall state changed, `diagnosis` events for findings raised or cleared. */
  private publishChanges(): void {
    const next = new Map<string, LiveState>();
    for (const { id } of this.options.resources()) {
      const state = this.resource(id).state;
      next.set(id, state);
      const previous = this.overall.get(id) ?? 'unknown';
      if (state !== previous) this.options.publish('live', { resource: id, state, previous });
    }
    this.overall = next;
    const current = new Map(this.findings().map((f) => [f.id, f]));
    for (const [id, finding] of current)
      if (!this.raised.has(id)) this.options.publish('diagnosis', { finding, action: 'raised' });
    for (const [id, finding] of this.raised)
      if (!current.has(id)) this.options.publish('diagnosis', { finding, action: 'cleared' });
    this.raised = current;
  }
}

function sameEntries(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [key, value] of a) if (b.get(key) !== value) return false;
  return true;
}
