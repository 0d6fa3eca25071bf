/**
 * The recorder of the config history (API.md §4.24): every change of the data dir the store reports
 * (API writes, hand edits, discovery, restores, cluster changes) is noted with its author, and within
 * `batch_ms` (1 s) the noted files are read, redacted (redact.ts) and committed by one
 * `git fast-import` run, one commit per author of the batch, with the audit lines of the requests as
 * the message. All of it runs off the request path: a write only adds a path to a set. A git failure
 * is logged, reported in status() and retried with backoff (the paths stay noted); writes never wait
 * for git and never fail because of it.
 *
 * After each batch: a push to `remote_url` when set (one at a time, retried, failures in status), and
 * squashing once the branch holds more than `max_commits` commits (squash.ts).
 */
import { lstat, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { AuditEntry } from '../../core/audit.ts';
import type { AnyChangeEvent, YamlStore } from '../../core/store/types.ts';
import { blobId, Git, REF } from './git.ts';
import { Redactor } from './redact.ts';
import { squash } from './squash.ts';

/** Who made a change, as the recorder attributes it. */
export interface Attribution {
  /** Commit author name: a token name, `anonymous`, `gitops`, `discovery`, `restore`, `cluster:<node>`, `stack-manager`. */
  author: string;
  /** `api`, `file`, `discovery`, `restore`, `cluster` (the commit's email local part). */
  source: string;
  /** Request id whose audit line is the message (API writes and history restores). */
  requestId?: string;
}

/** A request's audit line (core/audit.ts), kept by the history for the commit message. */
export type AuditLine = AuditEntry;

export interface RecorderOptions {
  store: YamlStore;
  git: Git;
  batchMs: number;
  maxCommits: number;
  remote: { url: string; username: string; password: string } | null;
  nodeName: string;
  log: {
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
  };
  /** Who is writing right now (the request in whose async context the store reports a change). */
  current: () => Attribution | undefined;
  /** The audit line of a finished request, if it has finished. */
  auditLine: (requestId: string) => AuditLine | undefined;
  now?: () => Date;
  /** Called after every push attempt that failed, and after the first success following failures. */
  onPushResult?: () => void;
}

export interface HistoryStatus {
  enabled: boolean;
  /** git works and the repository is open. */
  available: boolean;
  head: string | null;
  commits: number;
  /** Files noted and not yet committed. */
  pending: number;
  last_commit_at: string | null;
  /** ms from the first change of the last batch to its commit. */
  last_batch_ms: number | null;
  /** ms the last batch's commit work took (read, redact, fast-import): git's share of a batch. */
  last_commit_ms: number | null;
  /** Files in the last batch's commits. */
  last_batch_files: number | null;
  last_error: { at: string; message: string } | null;
  remote: {
    url: string;
    last_push_at: string | null;
    pushed_head: string | null;
    last_error: { at: string; message: string } | null;
  } | null;
}

interface Group {
  author: string;
  source: string;
  paths: Set<string>;
  requestIds: Set<string>;
  /** Date.now() of the first change. */
  since: number;
  /**
   * The file's bytes read right after this group's change (raw, redacted at commit): a later
   * writer's change of the same file in the same window is its own commit, and this one keeps
   * what this author wrote.
   */
  snapshots: Map<string, Promise<Buffer | null>>;
}

/** Paths (relative, `/`-separated) that are history: the data files, not hidden or temp ones. */
export function tracked(relative: string): boolean {
  if (!relative || relative.startsWith('../')) return false;
  const parts = relative.split('/');
  if (parts.some((part) => part.startsWith('.') || part.endsWith('.tmp') || part.endsWith('.lock'))) return false;
  return !(parts.length === 1 && /^audit\.log(\.\d+)?$/.test(parts[0]));
}

/** A request whose reply has not been sent when its batch is due is waited for at most this long. */
const AWAIT_REPLY_MS = 5000;
const MAX_RETRY_MS = 60_000;
/**
 * fast-import writes one small pack per batch; every this many batches they are folded together
 * geometrically (`git repack --geometric=2`: only the small packs are rewritten, never the whole
 * history), so git never has to search thousands of packs.
 */
const REPACK_EVERY = 20;
/** A push that hangs (an unreachable remote) is cut and retried. */
const PUSH_TIMEOUT_MS = 60_000;
/** Shutdown waits this long for a push in progress (the commits are safe locally either way). */
const CLOSE_PUSH_WAIT_MS = 2_000;
/** Bytes above which a file is committed as a size note (a data file is at most 1 MiB, §3.3). */
const MAX_FILE_BYTES = 16 * 1024 * 1024;

export class Recorder {
  private readonly redactor: Redactor;
  /** path → blob id committed at the head. */
  private files = new Map<string, string>();
  private head: string | null = null;
  private commits = 0;
  private batchesSinceRepack = 0;
  /** Pending changes in the order they came: consecutive changes of one author are one group. */
  private groups: Group[] = [];
  /** Snapshot reads run one after another (a sync of 10,000 files must not open them all at once). */
  private reads: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private tail: Promise<void> = Promise.resolve();
  private holds = 0;
  private retryMs = 0;
  private closed = false;
  private available = false;
  private lastError: { at: string; message: string } | null = null;
  private lastCommitAt: string | null = null;
  private lastBatchMs: number | null = null;
  private lastCommitMs: number | null = null;
  private lastBatchFiles: number | null = null;
  private pushTimer: NodeJS.Timeout | null = null;
  private pushing: Promise<void> | null = null;
  private pushAgain = false;
  private pushRetryMs = 0;
  private pushedHead: string | null = null;
  private lastPushAt: string | null = null;
  private pushError: { at: string; message: string } | null = null;
  private unsubscribe: (() => void) | null = null;
  private readonly now: () => Date;
  /** Resolves listeners waiting for everything noted so far to be committed. */
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: RecorderOptions) {
    this.redactor = new Redactor(options.git.gitDir);
    this.now = options.now ?? (() => new Date());
  }

  get git(): Git {
    return this.options.git;
  }

  /** Subscribes to the store at once, so no change is missed; they are committed once openRepository() ran. */
  start(): void {
    this.unsubscribe = this.options.store.onAnyChange((event) => this.onChange(event));
  }

  /**
   * Opens (or creates) the repository and compares the data dir with its head, in the background.
   * Called once the app is ready: the walk reads every data file, which the first provider config
   * need not wait for.
   */
  openRepository(): void {
    if (this.closed) return;
    this.tail = this.tail.then(() => this.open());
  }

  private async open(): Promise<void> {
    try {
      await this.options.git.init();
      await this.redactor.open();
      this.head = await this.options.git.head();
      this.files = this.head ? await this.options.git.tree(this.head) : new Map();
      this.commits = await this.options.git.count();
      this.available = true;
      this.lastError = null;
      // what changed while the server was down (or everything, on the first start): hand edits
      const all = await this.walk();
      for (const relative of this.files.keys()) all.add(relative);
      // paths noted since the start are committed by their own authors; the state found on disk
      // is committed before them
      const noted = new Set<string>();
      for (const other of this.groups) for (const p of other.paths) noted.add(p);
      const group = this.newGroup({ author: 'gitops', source: 'file' });
      for (const relative of all) if (!noted.has(relative)) group.paths.add(relative);
      this.groups.unshift(group);
      this.schedule(0);
    } catch (err) {
      this.fail(err, 'the config history repository could not be opened');
      this.retryLater(() => this.open());
    }
  }

  /** Every tracked file of the data dir. */
  private async walk(): Promise<Set<string>> {
    const found = new Set<string>();
    const root = this.options.store.dataDir;
    const visit = async (dir: string, depth: number): Promise<void> => {
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const entry of entries) {
        const relative = path.relative(root, path.join(dir, entry.name)).split(path.sep).join('/');
        if (!tracked(relative)) continue;
        if (entry.isDirectory() && depth < 6) await visit(path.join(dir, entry.name), depth + 1);
        else if (entry.isFile()) found.add(relative);
      }
    };
    await visit(root, 0);
    return found;
  }

  private onChange(event: AnyChangeEvent): void {
    if (this.closed || event.source === 'startup') return;
    const attribution = this.attribute(event.source);
    const group = this.group(attribution);
    if (attribution.requestId) group.requestIds.add(attribution.requestId);
    for (const relative of this.candidates(event)) {
      group.paths.add(relative);
      if (!relative.endsWith('*')) {
        const read = this.reads.then(() => this.readRaw(relative));
        this.reads = read;
        group.snapshots.set(relative, read);
      }
    }
    this.schedule(this.options.batchMs);
  }

  private attribute(source: AnyChangeEvent['source']): Attribution {
    const current = this.options.current();
    if (source === 'api') return current ?? { author: 'stack-manager', source: 'api' };
    if (source === 'file') return { author: 'gitops', source: 'file' };
    if (source === 'discovery') return { author: 'discovery', source: 'discovery' };
    if (source === 'restore') return { author: 'restore', source: 'restore', requestId: current?.requestId };
    return { author: `cluster:${this.options.nodeName}`, source: 'cluster' };
  }

  /** The group a change joins: the last one when it is by the same author, else a new one. */
  private group(attribution: Attribution): Group {
    const last = this.groups.at(-1);
    if (last && last.author === attribution.author && last.source === attribution.source) return last;
    const group = this.newGroup(attribution);
    this.groups.push(group);
    return group;
  }

  private newGroup(attribution: Attribution): Group {
    return {
      author: attribution.author,
      source: attribution.source,
      paths: new Set(),
      requestIds: new Set(),
      since: Date.now(),
      snapshots: new Map(),
    };
  }

  /**
   * The files an event may have changed: the object's file (`.yaml` or `.yml`), the document, the
   * invalid files of the collection (an event without id) and the non-YAML files beside it (keys,
   * certificates: written raw next to the object's file).
   */
  private candidates(event: AnyChangeEvent): string[] {
    const out: string[] = [];
    const isDocument = /\.ya?ml$/.test(event.collection) && event.id === undefined;
    const dir = isDocument ? path.posix.dirname(event.collection) : event.collection;
    if (isDocument) out.push(event.collection);
    else if (event.id !== undefined) out.push(`${dir}/${event.id}.yaml`, `${dir}/${event.id}.yml`);
    else
      for (const file of this.options.store.invalidFiles()) {
        const relative = path.relative(this.options.store.dataDir, file.path).split(path.sep).join('/');
        if (path.posix.dirname(relative) === dir) out.push(relative);
      }
    // raw siblings (mtls keys and certificates, the initial token): the directory is listed at commit time
    out.push(`${dir === '.' ? '' : `${dir}/`}*`);
    return out.filter((relative) => tracked(relative.replace(/\*$/, 'x')));
  }

  private schedule(delay: number): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.tail = this.tail.then(() => this.flush());
    }, delay);
    this.timer.unref?.();
  }

  /** Keeps batches from being committed while `fn` runs (a restore's files become one commit). */
  async holding<R>(fn: () => Promise<R>): Promise<R> {
    this.holds += 1;
    try {
      return await fn();
    } finally {
      this.holds -= 1;
      if (this.groups.length > 0) this.schedule(this.options.batchMs);
    }
  }

  /** Resolves once everything noted so far is committed (or the recorder gave up for now); for tests and shutdown. */
  async idle(): Promise<void> {
    while (!this.closed && this.groups.length > 0 && this.available) {
      await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    }
    await this.tail;
  }

  private async flush(): Promise<void> {
    if (this.closed || !this.available) return;
    if (this.holds > 0) {
      this.schedule(this.options.batchMs);
      return;
    }
    // in order, up to the first group still waiting for its request's reply (its audit line)
    const nowMs = Date.now();
    let count = 0;
    for (const group of this.groups) {
      const waiting = [...group.requestIds].some((id) => !this.options.auditLine(id));
      if (waiting && nowMs - group.since < AWAIT_REPLY_MS) break;
      count += 1;
    }
    const due = this.groups.splice(0, count);
    if (due.length > 0) {
      try {
        await this.commit(due);
        this.retryMs = 0;
        this.lastError = null;
      } catch (err) {
        this.fail(err, 'config history commit failed; retrying');
        this.groups.unshift(...due);
        this.retryMs = Math.min(MAX_RETRY_MS, Math.max(1000, this.retryMs * 2));
        this.schedule(this.retryMs);
        return;
      }
    }
    if (this.groups.length > 0) this.schedule(this.options.batchMs);
    else {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  /** Reads, redacts and commits the groups' files: one fast-import run, one commit per group with changes. */
  private async commit(groups: Group[]): Promise<void> {
    const started = Math.min(...groups.map((g) => g.since));
    const working = performance.now();
    const next = new Map(this.files);
    const commits: { group: Group; changes: { path: string; bytes: Buffer | null }[] }[] = [];
    for (const group of groups) {
      const paths = await this.expand(group.paths);
      const changes: { path: string; bytes: Buffer | null }[] = [];
      for (const relative of [...paths].sort()) {
        const snapshot = group.snapshots.get(relative);
        const raw = snapshot ? await snapshot : await this.readRaw(relative);
        const bytes = raw === null ? null : this.redactor.redact(relative, raw);
        const id = bytes ? blobId(bytes) : undefined;
        if (id === next.get(relative)) continue;
        if (id) next.set(relative, id);
        else next.delete(relative);
        changes.push({ path: relative, bytes });
      }
      if (changes.length > 0) commits.push({ group, changes });
    }
    if (commits.length === 0) return;
    await this.redactor.save();
    const chunks: Buffer[] = [];
    const add = (text: string) => chunks.push(Buffer.from(text, 'utf8'));
    commits.forEach(({ group, changes }, index) => {
      const when = Math.floor(group.since / 1000);
      const message = Buffer.from(this.message(group, changes), 'utf8');
      add(`commit ${REF}\nmark :${index + 1}\n`);
      add(`author ${clean(group.author)} <${group.source}@stack-manager> ${when} +0000\n`);
      add(`committer Stack Manager <history@stack-manager> ${Math.floor(Date.now() / 1000)} +0000\n`);
      add(`data ${message.length}\n`);
      chunks.push(message);
      add('\n');
      if (index === 0 && this.head) add(`from ${this.head}\n`);
      for (const change of changes) {
        if (change.bytes === null) add(`D ${quote(change.path)}\n`);
        else {
          add(`M 100644 inline ${quote(change.path)}\ndata ${change.bytes.length}\n`);
          chunks.push(change.bytes);
          add('\n');
        }
      }
      add('\n');
    });
    add('done\n');
    await this.options.git.run(['fast-import', '--quiet', '--done'], { input: Buffer.concat(chunks) });
    this.head = await this.options.git.head();
    this.files = next;
    this.commits += commits.length;
    this.lastCommitAt = this.now().toISOString();
    this.lastBatchMs = Date.now() - started;
    this.lastCommitMs = Math.round(performance.now() - working);
    this.lastBatchFiles = commits.reduce((sum, c) => sum + c.changes.length, 0);
    if (this.commits > this.options.maxCommits) await this.squash();
    else if (++this.batchesSinceRepack >= REPACK_EVERY) {
      this.batchesSinceRepack = 0;
      await this.options.git
        .run(['repack', '-d', '-q', '--geometric=2'])
        .catch((err: unknown) => this.options.log.warn({ err: String(err) }, 'config history repack failed'));
    }
    this.schedulePush();
  }

  /** Expands `dir/*` entries to the non-YAML files now in that dir, plus those committed there. */
  private async expand(paths: Set<string>): Promise<Set<string>> {
    const out = new Set<string>();
    for (const relative of paths) {
      if (!relative.endsWith('*')) {
        out.add(relative);
        continue;
      }
      const dir = relative.slice(0, -1).replace(/\/$/, '');
      const absolute = path.join(this.options.store.dataDir, dir);
      const entries = await readdir(absolute, { withFileTypes: true }).catch(() => []);
      for (const entry of entries) {
        const child = dir ? `${dir}/${entry.name}` : entry.name;
        if (entry.isFile() && !/\.ya?ml$/.test(entry.name) && tracked(child)) out.add(child);
      }
      for (const known of this.files.keys())
        if (path.posix.dirname(known) === (dir || '.') && !/\.ya?ml$/.test(known)) out.add(known);
    }
    return out;
  }

  /** A file's bytes now (not redacted yet), or null when it is gone (or not a regular file). */
  private async readRaw(relative: string): Promise<Buffer | null> {
    const file = path.join(this.options.store.dataDir, relative);
    try {
      const info = await lstat(file);
      if (!info.isFile()) return null;
      if (info.size > MAX_FILE_BYTES) return Buffer.from(`# not recorded: ${info.size} bytes\n`);
      return await readFile(file);
    } catch {
      return null;
    }
  }

  /** The commit message: the audit lines of the requests, or a line naming the source and files. */
  private message(group: Group, changes: { path: string; bytes: Buffer | null }[]): string {
    const lines = [...group.requestIds]
      .map((id) => this.options.auditLine(id))
      .filter((line): line is AuditLine => line !== undefined);
    const files = changes.map((c) => c.path);
    const named = files.length <= 3 ? files.join(', ') : `${files.slice(0, 3).join(', ')} and ${files.length - 3} more`;
    if (lines.length > 0) {
      const first = lines[0];
      const subject = `${first.method} ${first.path} ${first.status}${lines.length > 1 ? ` (+${lines.length - 1} more)` : ''}`;
      return `${subject}\n\n${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;
    }
    const what: Record<string, string> = {
      file: 'hand edit',
      discovery: 'discovery sync',
      restore: 'backup restore',
      cluster: 'change from the cluster',
      api: 'change by the server',
    };
    return `${what[group.source] ?? group.source}: ${named}\n`;
  }

  private async squash(): Promise<void> {
    const keep = Math.max(1, Math.floor(this.options.maxCommits * 0.9));
    const result = await squash(this.options.git, keep);
    if (!result) return;
    this.head = result.head;
    this.commits = result.commits;
    this.options.log.info({ squashed: result.squashed, kept: keep }, 'config history squashed');
  }

  private schedulePush(): void {
    if (!this.options.remote || this.closed) return;
    if (this.pushing) {
      this.pushAgain = true;
      return;
    }
    if (this.pushTimer) return;
    this.pushTimer = setTimeout(() => {
      this.pushTimer = null;
      this.pushing = this.push().finally(() => {
        this.pushing = null;
        if (this.pushAgain) {
          this.pushAgain = false;
          this.schedulePush();
        }
      });
    }, this.pushRetryMs);
    this.pushTimer.unref?.();
  }

  /** Pushes the branch to the remote (forced: squashing rewrites it); failures retried with backoff. */
  private async push(): Promise<void> {
    const remote = this.options.remote;
    const head = this.head;
    if (!remote || !head || head === this.pushedHead) return;
    const helper =
      remote.username || remote.password
        ? [
            '-c',
            'credential.helper=',
            '-c',
            'credential.helper=!f() { echo "username=$SM_GIT_USER"; echo "password=$SM_GIT_PASS"; }; f',
          ]
        : [];
    try {
      await this.options.git.run([...helper, 'push', '--quiet', '--force', remote.url, `${head}:${REF}`], {
        env: { SM_GIT_USER: remote.username, SM_GIT_PASS: remote.password },
        timeoutMs: PUSH_TIMEOUT_MS,
      });
      this.pushedHead = head;
      this.lastPushAt = this.now().toISOString();
      const failed = this.pushError !== null;
      this.pushError = null;
      this.pushRetryMs = 0;
      if (failed) this.options.onPushResult?.();
    } catch (err) {
      const message = scrub(err instanceof Error ? err.message : String(err), remote);
      this.pushError = { at: this.now().toISOString(), message };
      this.options.log.warn({ remote: redactUrl(remote.url), err: message }, 'config history push failed; retrying');
      this.pushRetryMs = Math.min(MAX_RETRY_MS, Math.max(1000, this.pushRetryMs * 2));
      this.pushAgain = true;
      this.options.onPushResult?.();
    }
  }

  /** Resolves once the current head is on the remote (or the last push failed); for tests. */
  async pushed(): Promise<void> {
    await this.idle();
    while (this.pushing || this.pushTimer) {
      await (this.pushing ?? new Promise((resolve) => setTimeout(resolve, 20)));
    }
  }

  private fail(err: unknown, msg: string): void {
    const message = err instanceof Error ? err.message : String(err);
    this.lastError = { at: this.now().toISOString(), message };
    this.options.log.error({ err: message }, msg);
  }

  private retryLater(work: () => Promise<void>): void {
    this.retryMs = Math.min(MAX_RETRY_MS, Math.max(1000, this.retryMs * 2));
    const timer = setTimeout(() => {
      if (!this.closed) this.tail = this.tail.then(work);
    }, this.retryMs);
    timer.unref?.();
  }

  status(): HistoryStatus {
    let pending = 0;
    for (const group of this.groups) pending += group.paths.size;
    return {
      enabled: true,
      available: this.available,
      head: this.head,
      commits: this.commits,
      pending,
      last_commit_at: this.lastCommitAt,
      last_batch_ms: this.lastBatchMs,
      last_commit_ms: this.lastCommitMs,
      last_batch_files: this.lastBatchFiles,
      last_error: this.lastError,
      remote: this.options.remote
        ? {
            url: redactUrl(this.options.remote.url),
            last_push_at: this.lastPushAt,
            pushed_head: this.pushedHead,
            last_error: this.pushError,
          }
        : null,
    };
  }

  /** Unredacts committed bytes for a restore (throws UnknownSecretError). */
  unredact(relative: string, committed: Buffer): Buffer {
    return this.redactor.unredact(relative, committed);
  }

  /** Commits what is noted (bounded by the caller's grace), then stops. */
  async close(): Promise<void> {
    this.unsubscribe?.();
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
      if (this.available && this.holds === 0) this.tail = this.tail.then(() => this.flushAll());
    }
    await this.tail.catch(() => undefined);
    this.closed = true;
    if (this.pushTimer) clearTimeout(this.pushTimer);
    if (this.pushing) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.pushing, new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_PUSH_WAIT_MS)))]);
      clearTimeout(timer);
    }
    for (const resolve of this.idleWaiters) resolve();
  }

  /** Commits every group now, replies awaited or not (shutdown). */
  private async flushAll(): Promise<void> {
    const due = this.groups;
    this.groups = [];
    if (due.length > 0)
      await this.commit(due).catch((err) => this.fail(err, 'config history commit at shutdown failed'));
  }
}

/** Author names without the characters fast-import's ident syntax forbids. */
const clean = (name: string) => name.replace(/[<>\n]/g, '_') || 'unknown';

/** A path for fast-import: C-quoted when it holds a quote, a backslash or a control character. */
function quote(relative: string): string {
  const special = [...relative].some((char) => char === '"' || char === '\\' || char.charCodeAt(0) < 0x20);
  if (!special) return relative;
  return JSON.stringify(relative);
}

/** The URL without user info (for status and logs). */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, '$1***@');
}

function scrub(message: string, remote: { url: string; password: string }): string {
  let out = message.split(remote.url).join(redactUrl(remote.url));
  if (remote.password) out = out.split(remote.password).join('***');
  return out;
}
