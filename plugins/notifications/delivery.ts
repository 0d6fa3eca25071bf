/**
 * Delivery (API.md §4.21): a queue per channel, one attempt at a time per channel and channels
 * independent of each other, so a hanging receiver delays only its own messages and never a
 * request. Retries after 1 s, 5 s, 30 s, 2 min, 10 min, then `failed`; quiet hours hold messages
 * below `error`; hourly/daily channels get one digest per period; past `max_per_minute` messages
 * are `suppressed` and folded into one "N more" message. Every queued message is on disk before its
 * attempt starts: after a restart it is sent, or — if the process stopped during its attempt —
 * reported failed (it may have arrived), never dropped silently.
 */
import { randomBytes } from 'node:crypto';
import { RETRY_DELAYS_MS, atLeast, highest, periodEnd, quietUntil } from './rules.ts';
import type { Category, ChannelData, HistoryStatus, Severity } from './schemas.ts';
import type { OutgoingMessage } from './senders/index.ts';
import type { DeliveryRecord, DeliveryState, StateFile } from './state-file.ts';

/** A notification raised by an event, before it is fanned out to channels. */
export interface Notification {
  category: Category;
  severity: Severity;
  title: string;
  body: string;
}

export type Channel = ChannelData & { id: string };

export interface DeliveryOptions {
  now: () => Date;
  channels: () => Channel[];
  channel: (id: string) => Channel | undefined;
  /** One attempt; rejects with an Error whose message is already scrubbed of the channel's secrets. */
  send: (channel: Channel, message: OutgoingMessage, signal: AbortSignal) => Promise<void>;
  state: (snapshot: () => DeliveryState) => StateFile;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  tickMs: number;
}

/** History entries kept besides the queued ones. */
export const HISTORY_LIMIT = 1000;
const MINUTE_MS = 60_000;
/** How long close() lets running attempts finish before abandoning them. */
const CLOSE_GRACE_MS = 2_000;
/** Titles a digest or "N more" message lists; the rest are counted. */
const LISTED = 20;

export class Delivery {
  private records: DeliveryRecord[] = [];
  private readonly byId = new Map<string, DeliveryRecord>();
  private readonly busy = new Map<string, Promise<void>>();
  /** First attempts per channel in the last minute (the cap). */
  private readonly recent = new Map<string, number[]>();
  /** Suppressed record ids per channel, waiting for their "N more" message. */
  private readonly folded = new Map<string, { ids: string[]; first: number }>();
  private readonly totals = new Map<string, Record<'sent' | 'failed' | 'suppressed', number>>();
  private readonly abort = new AbortController();
  private readonly file: StateFile;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private handedOver = false;
  private sequence = 0;
  /** Extra work on every tick (the event sources' timers). */
  readonly onTick = new Set<(nowMs: number) => void>();

  constructor(private readonly options: DeliveryOptions) {
    this.file = options.state(() => ({
      records: this.records,
      folds: [...this.folded].map(([channel, fold]) => ({ channel, ids: fold.ids, first: fold.first })),
    }));
  }

  /**
   * Loads the queue left by the previous run; messages cut during an attempt are reported failed,
   * and a pending "N more" message is sent when its minute is over, as it would have been.
   */
  async open(): Promise<void> {
    let loaded: DeliveryState = { records: [], folds: [] };
    try {
      loaded = await this.file.load();
    } catch (err) {
      this.options.log.error({ err }, 'notifications: the delivery state file is unreadable; starting empty');
    }
    for (const record of loaded.records) {
      if (record.status === 'queued' && record.in_flight) {
        record.in_flight = false;
        this.finish(record, 'failed', 'interrupted by a restart during the attempt; it may have arrived');
      }
      this.add(record);
    }
    for (const fold of loaded.folds) {
      const ids = fold.ids.filter((id) => this.byId.get(id)?.status === 'suppressed');
      if (ids.length > 0) this.folded.set(fold.channel, { ids, first: fold.first });
    }
    if (loaded.records.length > 0) await this.file.save();
  }

  start(): void {
    this.timer = setInterval(() => this.tick(), this.options.tickMs);
    this.timer.unref();
    this.tick();
  }

  /** Fans a notification out to every enabled channel that takes its category and severity. */
  notify(notification: Notification): void {
    if (this.closed) return;
    const nowMs = this.nowMs();
    for (const channel of this.options.channels()) {
      if (!channel.enabled || !channel.categories.includes(notification.category)) continue;
      if (!atLeast(notification.severity, channel.min_severity)) continue;
      const record = this.newRecord(channel.id, notification);
      if (channel.schedule !== 'immediate') {
        record.hold = 'digest';
        record.due_at = periodEnd(channel.schedule, nowMs, channel.quiet_hours?.timezone ?? 'UTC');
      }
      this.add(record);
    }
    this.trim();
    void this.file.save();
    this.kick();
  }

  history(): DeliveryRecord[] {
    return [...this.records].reverse();
  }

  /** Sent, failed and suppressed messages per channel id since this process started. */
  counts(): { channel: string; status: string; count: number }[] {
    return [...this.totals].flatMap(([channel, totals]) =>
      Object.entries(totals).map(([status, count]) => ({ channel, status, count })),
    );
  }

  /** Runs every due piece of work now (the timer does this every tick). */
  tick(): void {
    if (this.closed) return;
    const nowMs = this.nowMs();
    for (const hook of this.onTick) hook(nowMs);
    let changed = this.dropOrphans();
    changed = this.flushFolds(nowMs) || changed;
    changed = this.flushDigests(nowMs) || changed;
    if (changed) void this.file.save();
    this.kick();
  }

  /**
   * Stops starting attempts (the instance is being replaced or shut down). `handOver`: a hot reload,
   * whose new instance has already loaded the queue and delivers it from now on — this one then
   * never writes the state file again, so it cannot overwrite the new one's.
   */
  pause(handOver: boolean): void {
    this.closed = true;
    this.handedOver = handOver;
    if (this.timer) clearInterval(this.timer);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.handedOver) return;
    const running = [...this.busy.values()];
    if (running.length > 0) {
      const grace = setTimeout(() => this.abort.abort(), CLOSE_GRACE_MS);
      await Promise.allSettled(running);
      clearTimeout(grace);
    }
    await this.file.save();
  }

  private nowMs(): number {
    return this.options.now().getTime();
  }

  private newRecord(channel: string, notification: Notification): DeliveryRecord {
    const now = this.options.now();
    return {
      id: `ntf-${now.getTime().toString(36)}-${(this.sequence++).toString(36)}-${randomBytes(3).toString('hex')}`,
      channel,
      category: notification.category,
      severity: notification.severity,
      title: notification.title,
      body: notification.body,
      at: now.toISOString(),
      status: 'queued',
      attempts: 0,
      last_error: null,
      due_at: null,
      hold: null,
      in_flight: false,
    };
  }

  private add(record: DeliveryRecord): void {
    this.records.push(record);
    this.byId.set(record.id, record);
  }

  /** Drops the oldest finished records past the history limit; queued ones always stay. */
  private trim(): void {
    let excess = this.records.length - HISTORY_LIMIT;
    if (excess <= 0) return;
    this.records = this.records.filter((record) => {
      if (excess <= 0 || record.status === 'queued') return true;
      excess--;
      this.byId.delete(record.id);
      return false;
    });
  }

  private kick(): void {
    const channels = new Set(this.records.filter((r) => r.status === 'queued').map((r) => r.channel));
    for (const channel of channels) this.pump(channel);
  }

  /** Starts the next due attempt of a channel unless one is running. */
  private pump(channelId: string): void {
    if (this.closed || this.busy.has(channelId)) return;
    const channel = this.options.channel(channelId);
    if (!channel) return;
    const nowMs = this.nowMs();
    let changed = false;
    for (const record of this.records) {
      if (record.channel !== channelId || record.status !== 'queued' || record.in_flight) continue;
      if (record.hold === 'digest' || record.in_digest) continue;
      if (record.due_at !== null && record.due_at > nowMs) continue;
      if (record.attempts === 0 && record.severity !== 'error') {
        const until = quietUntil(channel, nowMs);
        if (until !== null) {
          record.hold = 'quiet';
          record.due_at = until;
          changed = true;
          continue;
        }
      }
      if (record.attempts === 0 && !record.kind && this.overCap(channel, nowMs)) {
        this.suppress(record, nowMs);
        changed = true;
        continue;
      }
      this.busy.set(channelId, this.attempt(channel, record));
      break;
    }
    if (changed) void this.file.save();
  }

  private overCap(channel: Channel, nowMs: number): boolean {
    const times = (this.recent.get(channel.id) ?? []).filter((t) => t > nowMs - MINUTE_MS);
    this.recent.set(channel.id, times);
    return times.length >= channel.max_per_minute;
  }

  private suppress(record: DeliveryRecord, nowMs: number): void {
    this.finish(record, 'suppressed', null);
    const fold = this.folded.get(record.channel) ?? { ids: [], first: nowMs };
    fold.ids.push(record.id);
    this.folded.set(record.channel, fold);
  }

  private async attempt(channel: Channel, record: DeliveryRecord): Promise<void> {
    const nowMs = this.nowMs();
    if (record.attempts === 0 && !record.kind) this.recent.get(channel.id)?.push(nowMs);
    record.attempts++;
    record.in_flight = true;
    // on disk before the receiver can have it: a crash during the attempt then reads as "may have arrived"
    await this.file.save();
    let error: string | null = null;
    try {
      await this.options.send(channel, toMessage(record), this.abort.signal);
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    }
    record.in_flight = false;
    if (error === null) this.finish(record, 'sent', null);
    else if (this.closed) this.finish(record, 'failed', `${error} (interrupted by shutdown; it may have arrived)`);
    else if (record.attempts > RETRY_DELAYS_MS.length) this.finish(record, 'failed', error);
    else {
      record.last_error = error;
      record.hold = 'retry';
      record.due_at = this.nowMs() + RETRY_DELAYS_MS[record.attempts - 1];
    }
    if (error !== null)
      this.options.log.warn(
        { channel: channel.id, notification: record.id, attempts: record.attempts, status: record.status, error },
        'notification attempt failed',
      );
    this.busy.delete(channel.id);
    if (!this.handedOver) void this.file.save();
    if (!this.closed) setImmediate(() => this.pump(channel.id));
  }

  private finish(record: DeliveryRecord, status: HistoryStatus, error: string | null): void {
    record.status = status;
    record.last_error = error ?? (status === 'sent' ? null : record.last_error);
    record.body = null;
    record.hold = null;
    record.due_at = null;
    // a digest counts as its members, each of which is counted below
    if (status !== 'queued' && record.kind !== 'digest')
      this.count(record.channel, status as 'sent' | 'failed' | 'suppressed');
    // a digest's members share its fate
    if (record.kind === 'digest' && (status === 'sent' || status === 'failed'))
      for (const id of record.members ?? []) {
        const member = this.byId.get(id);
        if (member && member.status === 'queued') this.finish(member, status, error);
      }
  }

  private count(channel: string, status: 'sent' | 'failed' | 'suppressed'): void {
    const totals = this.totals.get(channel) ?? { sent: 0, failed: 0, suppressed: 0 };
    totals[status]++;
    this.totals.set(channel, totals);
  }

  /** Queued records of deleted or disabled channels are reported failed. */
  private dropOrphans(): boolean {
    let changed = false;
    for (const record of this.records) {
      if (record.status !== 'queued' || record.in_flight) continue;
      const channel = this.options.channel(record.channel);
      if (channel && channel.enabled) continue;
      this.finish(record, 'failed', channel ? 'the channel was disabled' : 'the channel was deleted');
      changed = true;
    }
    return changed;
  }

  /** A minute after the first suppressed message of a channel, one "N more" message lists them. */
  private flushFolds(nowMs: number): boolean {
    let changed = false;
    for (const [channelId, fold] of this.folded) {
      if (nowMs - fold.first < MINUTE_MS) continue;
      this.folded.delete(channelId);
      const members = fold.ids.map((id) => this.byId.get(id)).filter((r) => r !== undefined);
      if (members.length === 0) continue;
      const record = this.combined(channelId, members, `${members.length} more notifications`, 'fold');
      record.body = `Past the limit of messages per minute, these were held back:\n${listing(members)}`;
      this.add(record);
      changed = true;
    }
    if (changed) this.trim();
    return changed;
  }

  /** At the end of its period, a channel's waiting records go out as one digest. */
  private flushDigests(nowMs: number): boolean {
    const due = new Map<string, DeliveryRecord[]>();
    for (const record of this.records)
      if (record.status === 'queued' && record.hold === 'digest' && record.due_at !== null && record.due_at <= nowMs)
        due.set(record.channel, [...(due.get(record.channel) ?? []), record]);
    for (const [channelId, members] of due) {
      const schedule = this.options.channel(channelId)?.schedule ?? 'digest';
      const record = this.combined(
        channelId,
        members,
        `Digest: ${members.length} notifications (${schedule})`,
        'digest',
      );
      record.body = listing(members);
      for (const member of members) {
        member.hold = null;
        member.due_at = null;
        member.in_digest = record.id;
      }
      this.add(record);
    }
    return due.size > 0;
  }

  private combined(
    channelId: string,
    members: DeliveryRecord[],
    title: string,
    kind: 'digest' | 'fold',
  ): DeliveryRecord {
    const categories = new Set(members.map((member) => member.category));
    const record = this.newRecord(channelId, {
      category: (categories.size === 1 ? members[0].category : 'system') as Category,
      severity: highest(members.map((member) => member.severity)),
      title,
      body: '',
    });
    record.kind = kind;
    record.members = members.map((member) => member.id);
    return record;
  }
}

function toMessage(record: DeliveryRecord): OutgoingMessage {
  return {
    id: record.id,
    category: record.category,
    severity: record.severity,
    title: record.title,
    body: record.body ?? '',
    at: record.at,
  };
}

/** `- [severity] title (at)` per record, the first LISTED of them. */
function listing(records: DeliveryRecord[]): string {
  const lines = records.slice(0, LISTED).map((r) => `- [${r.severity}] ${r.title} (${r.category}, ${r.at})`);
  if (records.length > LISTED) lines.push(`… and ${records.length - LISTED} more`);
  return lines.join('\n');
}
