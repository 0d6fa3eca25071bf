/**
 * Which Traefik instances poll which document (docs/API.md "Provider targets", status `targets`):
 * one entry per (document, remote address, User-Agent, token name), with the ETag of the last body
 * it got. Recording is on the provider's request path, so it is a map lookup and a few field
 * writes; the 10-minute window and the age order are applied when the status is read.
 */

/** Entries seen longer ago than this are not reported (and are dropped when the status is read). */
export const POLLER_WINDOW_MS = 10 * 60 * 1000;
/** At most this many instances per document; the one polled longest ago goes first. */
export const MAX_POLLERS_PER_DOCUMENT = 1000;

interface Entry {
  remoteAddress: string;
  userAgent: string;
  tokenName: string | null;
  lastPoll: number;
  /** ETag (quoted) of the body it got or was told it has (304) */
  etag: string;
  yaml: boolean;
  /** polls answered 200 / 304 since the entry was created (GET /metrics, API.md §4.22) */
  ok: number;
  notModified: number;
  /** polls answered 502: no document yet (status only; polls are not logged one by one, §2.11) */
  unavailable: number;
  /** polls refused with 401: wrong or missing token (status only; the entry has no token name) */
  refused: number;
}

/** Polls of one document by one remote address with one answer status (GET /metrics). */
export interface PollCount {
  target: string;
  instance: string;
  status: '200' | '304';
  count: number;
}

export interface InstanceView {
  remote_address: string;
  user_agent: string;
  token_name?: string;
  last_poll: string;
  current: boolean;
  /** polls by answer status since the instance was first seen in the window (API.md §2.11) */
  polls: { '200': number; '304': number; '401': number; '502': number };
}

export class PollerLog {
  private readonly documents = new Map<string, Map<string, Entry>>();
  private lastKey: { remoteAddress: string; userAgent: string; tokenName: string | null; key: string } | null = null;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly limit = MAX_POLLERS_PER_DOCUMENT,
  ) {}

  /**
   * Records a poll of `document` answered with (or confirming, on 304) the body of `etag`, in YAML
   * or JSON. A known instance costs one map lookup and three field writes; the age order is only
   * worked out when a new instance finds the map full (rare) and when the status is read.
   * `notModified`: the poll was answered 304 (counted apart from the 200s).
   */
  seen(
    document: string,
    remoteAddress: string,
    userAgent: string,
    tokenName: string | null,
    etag: string,
    yaml: boolean,
    notModified = false,
  ): void {
    const entry = this.entryOf(document, remoteAddress, userAgent, tokenName);
    entry.etag = etag;
    entry.yaml = yaml;
    if (notModified) entry.notModified += 1;
    else entry.ok += 1;
  }

  /**
   * Records a poll of `document` answered 502 (no document yet): the instance is listed, not
   * current, with the count. Off the fast path (the fast route leaves these polls to Fastify).
   */
  unavailable(document: string, remoteAddress: string, userAgent: string, tokenName: string | null): void {
    this.entryOf(document, remoteAddress, userAgent, tokenName).unavailable += 1;
  }

  /**
   * Records a poll of `document` refused with 401 (wrong or missing token): the instance is listed
   * under its address and User-Agent without a token name, not current. Off the fast path (the fast
   * route serves only requests carrying provider.token and leaves the others to Fastify).
   * True for the instance's first refusal in the window (the caller logs that one only).
   */
  refused(document: string, remoteAddress: string, userAgent: string): boolean {
    const entry = this.entryOf(document, remoteAddress, userAgent, null);
    entry.refused += 1;
    return entry.refused === 1;
  }

  /** The instance's entry with lastPoll set to now: found, or added with zero counts (the oldest goes when full). */
  private entryOf(document: string, remoteAddress: string, userAgent: string, tokenName: string | null) {
    let entries = this.documents.get(document);
    if (!entries) this.documents.set(document, (entries = new Map()));
    const key = this.keyOf(remoteAddress, userAgent, tokenName);
    const now = this.now();
    let entry = entries.get(key);
    if (entry) {
      entry.lastPoll = now;
      return entry;
    }
    if (entries.size >= this.limit) entries.delete(oldestKey(entries));
    entry = {
      remoteAddress,
      userAgent,
      tokenName,
      lastPoll: now,
      etag: '',
      yaml: false,
      ok: 0,
      notModified: 0,
      unavailable: 0,
      refused: 0,
    };
    entries.set(key, entry);
    return entry;
  }

  /**
   * Poll counts per document, remote address and status, summed over the instances (User-Agents,
   * tokens) of one address. An instance dropped from the log (not seen for the 10-minute window
   * when a status was read, or pushed out of a full map) takes its counts with it: its series
   * restarts from zero if it comes back, which Prometheus reads as a counter reset.
   */
  counts(): PollCount[] {
    const out: PollCount[] = [];
    for (const [target, entries] of this.documents) {
      const sums = new Map<string, [number, number]>();
      for (const entry of entries.values()) {
        const sum = sums.get(entry.remoteAddress);
        if (sum) {
          sum[0] += entry.ok;
          sum[1] += entry.notModified;
        } else sums.set(entry.remoteAddress, [entry.ok, entry.notModified]);
      }
      for (const [instance, [ok, notModified]] of sums) {
        if (ok > 0) out.push({ target, instance, status: '200', count: ok });
        if (notModified > 0) out.push({ target, instance, status: '304', count: notModified });
      }
    }
    return out;
  }

  /**
   * The map key of an instance. Consecutive polls mostly come from the same instance (one Traefik's
   * connections): its key is reused, not concatenated and hashed again per request.
   */
  private keyOf(remoteAddress: string, userAgent: string, tokenName: string | null): string {
    const last = this.lastKey;
    if (
      last !== null &&
      last.remoteAddress === remoteAddress &&
      last.userAgent === userAgent &&
      last.tokenName === tokenName
    )
      return last.key;
    const key =
      tokenName === null
        ? `${remoteAddress}\u0000${userAgent}`
        : `${remoteAddress}\u0000${userAgent}\u0000${tokenName}`;
    this.lastKey = { remoteAddress, userAgent, tokenName, key };
    return key;
  }

  /**
   * Instances of `document` seen in the window, most recent poll first; `current` when the ETag
   * they last got is the current one of their format (null: the document has none).
   */
  instances(document: string, currentEtag: ((yaml: boolean) => string) | null): InstanceView[] {
    const entries = this.documents.get(document);
    if (!entries) return [];
    const since = this.now() - POLLER_WINDOW_MS;
    const out: (InstanceView & { lastPoll: number })[] = [];
    for (const [key, entry] of entries) {
      if (entry.lastPoll < since) {
        entries.delete(key);
        continue;
      }
      out.push({
        lastPoll: entry.lastPoll,
        remote_address: entry.remoteAddress,
        user_agent: entry.userAgent,
        ...(entry.tokenName ? { token_name: entry.tokenName } : {}),
        last_poll: new Date(entry.lastPoll).toISOString(),
        current: currentEtag !== null && entry.etag !== '' && currentEtag(entry.yaml) === entry.etag,
        polls: {
          '200': entry.ok,
          '304': entry.notModified,
          '401': entry.refused,
          '502': entry.unavailable,
        },
      });
    }
    return out.sort((a, b) => b.lastPoll - a.lastPoll).map(({ lastPoll: _sortKey, ...view }) => view);
  }

  /** Forgets a deleted target's instances. */
  forget(document: string): void {
    this.documents.delete(document);
  }
}

/** The key of the entry polled longest ago (a scan: it runs only when a full map meets a new instance). */
function oldestKey(entries: Map<string, Entry>): string {
  let oldest: string | undefined;
  let at = Infinity;
  for (const [key, entry] of entries) {
    if (entry.lastPoll < at) {
      at = entry.lastPoll;
      oldest = key;
    }
  }
  return oldest!;
}
