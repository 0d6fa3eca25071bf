/**
 * The delivery state on disk: every queued message, the history and the pending "N more" folds, one JSON file
 * `data/.notifications/state.json` (0600; hidden, so the watcher, backups and cluster replication
 * leave it alone: each node delivers its own queue). Writes are whole-file and atomic through the
 * store; calls while a write is waiting share it, so a burst of changes costs one or two writes.
 */
import type { YamlStore } from '../../core/store/types.ts';
import type { HistoryStatus, Severity } from './schemas.ts';

export const STATE_FILE = '.notifications/state.json';

/** One message for one channel: what the history shows plus what delivery needs. */
export interface DeliveryRecord {
  id: string;
  channel: string;
  category: string;
  severity: Severity;
  title: string;
  /** The text to send; dropped once the record is finished. */
  body: string | null;
  at: string;
  status: HistoryStatus;
  attempts: number;
  last_error: string | null;
  /** Queued: not before this instant (ms since the epoch); null = at once. */
  due_at: number | null;
  /** Why a queued record waits: a retry, quiet hours, the channel's digest period. */
  hold: 'retry' | 'quiet' | 'digest' | null;
  /** An attempt has started and not finished (on disk: the process stopped during it). */
  in_flight: boolean;
  /** A digest or "N more" message: the records it carries. */
  kind?: 'digest' | 'fold';
  members?: string[];
  /** A record waiting in a digest that is being sent. */
  in_digest?: string;
}

/** Suppressed records of a channel waiting for their "N more" message, due a minute after `first` (ms). */
export interface PendingFold {
  channel: string;
  ids: string[];
  first: number;
}

/** What the file holds besides its version. */
export interface DeliveryState {
  records: DeliveryRecord[];
  /** Absent in files written before folds were kept. */
  folds: PendingFold[];
}

interface StateContent extends Partial<DeliveryState> {
  version: 1;
}

export class StateFile {
  private lastWrite: Promise<void> = Promise.resolve();
  private queued: Promise<void> | null = null;

  /** Whether the last write failed: errors are reported once per streak, and the recovery once. */
  private failing = false;

  constructor(
    private readonly store: YamlStore,
    private readonly snapshot: () => DeliveryState,
    private readonly onError: (err: unknown) => void,
    private readonly onRecovered: () => void = () => undefined,
  ) {}

  async load(): Promise<DeliveryState> {
    const bytes = await this.store.readRaw(STATE_FILE);
    if (!bytes) return { records: [], folds: [] };
    const parsed = JSON.parse(bytes.toString('utf8')) as Partial<StateContent>;
    return {
      records: Array.isArray(parsed.records) ? parsed.records.filter(isRecord) : [],
      folds: Array.isArray(parsed.folds) ? parsed.folds.filter(isFold) : [],
    };
  }

  /** Resolves once a write that started after this call has finished (errors are reported, not thrown). */
  save(): Promise<void> {
    if (this.queued) return this.queued;
    const write = this.lastWrite.then(async () => {
      this.queued = null;
      const content = JSON.stringify({ version: 1, ...this.snapshot() } satisfies StateContent);
      try {
        await this.store.writeRaw(STATE_FILE, content, 0o600, 0o700);
        if (this.failing) {
          this.failing = false;
          this.onRecovered();
        }
      } catch (err) {
        if (!this.failing) {
          this.failing = true;
          this.onError(err);
        }
      }
    });
    this.queued = write;
    this.lastWrite = write;
    return write;
  }
}

function isFold(value: unknown): value is PendingFold {
  const fold = value as Partial<PendingFold> | null;
  return (
    typeof fold === 'object' &&
    fold !== null &&
    typeof fold.channel === 'string' &&
    typeof fold.first === 'number' &&
    Array.isArray(fold.ids) &&
    fold.ids.every((id) => typeof id === 'string')
  );
}

function isRecord(value: unknown): value is DeliveryRecord {
  const record = value as Partial<DeliveryRecord> | null;
  return (
    typeof record === 'object' &&
    record !== null &&
    typeof record.id === 'string' &&
    typeof record.channel === 'string' &&
    typeof record.status === 'string' &&
    typeof record.title === 'string'
  );
}
