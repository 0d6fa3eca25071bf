/**
 * Leader election on etcd for the cluster's singleton work (issue 14: discovery sync writes, the
 * backup schedule and retention, update jobs). Writes never need the leader; only work that must
 * run once per cluster asks `isLeader`.
 *
 * The algorithm is etcd's own recipe: each node holds a lease (TTL `ttlS`) kept alive by the etcd3
 * client, and the leader is the node whose txn created `<prefix>/leader` attached to its lease
 * (`create_revision == 0`). The key disappears when the leader resigns or its lease expires; the
 * others watch it and run the txn again.
 *
 * Safety: etcd expires a lease `ttlS` after it last *received* a keep-alive. A node counts its
 * lease as renewed from the moment it *sent* the keep-alive that was answered (earlier than
 * etcd's receipt), and demotes itself `marginMs` before that deadline, so a node that cannot reach
 * etcd (partition, all members down, a stalled event loop) has stopped its singleton work before
 * another node can be elected. etcd3's own Lease only reports a loss after 2 × TTL: too late.
 */
import { EventEmitter, once } from 'node:events';
import type { Namespace, Watcher } from 'etcd3';
import type { Logger } from 'pino';

export interface LeadershipOptions {
  /** The cluster's namespace (already under `cluster.prefix`). */
  etcd: Namespace;
  /** Written into the leader key: what `leader()` and the status report. */
  nodeName: string;
  /** Lease TTL in seconds (cluster.lease_ttl_s). */
  ttlS: number;
  logger: Logger;
  /** Key of the election inside the namespace. */
  key?: string;
  /** Deadline of one etcd call (ms): the lease grant, the txn, the revoke. */
  callTimeoutMs?: number;
}

export type LeadershipState = 'stopped' | 'candidate' | 'leader';

/** Resolves after `ms` or at once when `signal` aborts. */
const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * Events: `elected` (this node now runs the singleton work), `demoted` (reason: it must stop that
 * work now). Both are emitted synchronously at the moment the state changes.
 */
export class Leadership extends EventEmitter {
  readonly #etcd: Namespace;
  readonly #nodeName: string;
  readonly #ttlMs: number;
  readonly #marginMs: number;
  readonly #key: string;
  readonly #logger: Logger;
  readonly #callTimeoutMs: number;
  #state: LeadershipState = 'stopped';
  #stop = new AbortController();
  #loop: Promise<void> | null = null;
  #leaseId: string | null = null;
  /** When the last answered keep-alive was sent (ms): the lease lives at least until this + TTL. */
  #renewedAt = 0;
  #leaderSince: Date | null = null;
  /** Set while leading: resolves when this node must stop leading. */
  #demote: ((reason: string) => void) | null = null;

  constructor(options: LeadershipOptions) {
    super();
    this.#etcd = options.etcd;
    this.#nodeName = options.nodeName;
    this.#ttlMs = options.ttlS * 1000;
    this.#marginMs = Math.max(1000, this.#ttlMs / 4);
    this.#key = options.key ?? 'leader';
    this.#logger = options.logger;
    this.#callTimeoutMs = options.callTimeoutMs ?? 5_000;
  }

  get state(): LeadershipState {
    return this.#state;
  }
  /** Also false once the renewal deadline has passed, even if the guard timer has not run yet (a stalled event loop). */
  get isLeader(): boolean {
    return this.#state === 'leader' && Date.now() <= this.#deadline();
  }
  /** When this node became the leader, or null. */
  get leaderSince(): Date | null {
    return this.#leaderSince;
  }
  /** How long this node may still consider itself the leader (ms; 0 when it is not). */
  get remainingMs(): number {
    return this.isLeader ? Math.max(0, this.#deadline() - Date.now()) : 0;
  }

  /** Until when this node may lead: the lease outlives it by at least `marginMs`. */
  #deadline(): number {
    return this.#renewedAt + this.#ttlMs - this.#marginMs;
  }

  /** The name of the current leader as etcd has it (undefined: none right now). Throws when etcd is unreachable. */
  async leader(): Promise<string | undefined> {
    return (await this.#etcd.get(this.#key).string()) ?? undefined;
  }

  /** Starts campaigning; the loop runs until stop(). */
  start(): void {
    if (this.#loop) return;
    this.#stop = new AbortController();
    this.#state = 'candidate';
    this.#loop = this.#run();
  }

  /** Stops leading (revoking the lease lets another node take over at once) and campaigning. */
  async stop(): Promise<void> {
    if (!this.#loop) return;
    this.#stop.abort();
    await this.#loop;
    this.#loop = null;
    this.#state = 'stopped';
  }

  async #run(): Promise<void> {
    let backoffMs = 200;
    let unreachable = false;
    while (!this.#stop.signal.aborted) {
      try {
        await this.#campaign();
        backoffMs = 200;
        if (unreachable && !this.#stop.signal.aborted) this.#logger.info('cluster: etcd reachable again, campaigning');
        unreachable = false;
      } catch (err) {
        if (this.#stop.signal.aborted) break;
        if (!unreachable)
          this.#logger.warn(
            { err: { message: (err as Error).message } },
            'cluster: cannot campaign for leadership: etcd unreachable; retrying',
          );
        unreachable = true;
        await sleep(backoffMs, this.#stop.signal);
        backoffMs = Math.min(backoffMs * 2, this.#ttlMs / 2);
      }
    }
  }

  /** One lease: campaign with it until elected, lead until demoted, then give it up. */
  async #campaign(): Promise<void> {
    const lease = this.#etcd.lease(this.#ttlMs / 1000, {
      autoKeepAlive: true,
      deadline: Date.now() + this.#callTimeoutMs,
    });
    const fired: number[] = [];
    lease.on('keepaliveFired', () => {
      fired.push(Date.now());
    });
    lease.on('keepaliveSucceeded', () => {
      this.#renewedAt = fired.shift() ?? this.#renewedAt;
    });
    lease.on('keepaliveFailed', () => {
      fired.length = 0;
    });
    lease.on('lost', (err) => this.#demote?.(`lease lost: ${err.message}`));
    const sentAt = Date.now();
    try {
      const leaseId = await lease.grant();
      this.#renewedAt = sentAt;
      this.#leaseId = leaseId;
      while (!this.#stop.signal.aborted) {
        const result = await this.#etcd
          .if(this.#key, 'Create', '==', 0)
          .then(this.#etcd.put(this.#key).value(this.#nodeName).lease(leaseId))
          .else(this.#etcd.get(this.#key))
          .options({ deadline: Date.now() + this.#callTimeoutMs })
          .commit();
        if (result.succeeded) {
          await this.#lead();
          return; // a new lease for the next campaign
        }
        const holder = result.responses[0]?.response_range?.kvs?.[0];
        await this.#waitForVacancy(Number(result.header.revision), holder?.value?.toString());
      }
    } finally {
      this.#leaseId = null;
      // revoking frees the leader key at once; when etcd is unreachable it expires with the TTL
      await lease.revoke({ deadline: Date.now() + this.#callTimeoutMs }).catch(() => lease.release());
    }
  }

  /** Leads until the lease is not renewed in time, is lost, or stop() is called. */
  async #lead(): Promise<void> {
    this.#state = 'leader';
    this.#leaderSince = new Date();
    // stop() may have come while the winning txn was in flight, before #demote existed
    const stopped = () => this.#demote?.('stopping');
    const reason = new Promise<string>((resolve) => {
      this.#demote = resolve;
    });
    if (this.#stop.signal.aborted) stopped();
    else this.#stop.signal.addEventListener('abort', stopped, { once: true });
    const guard = setInterval(
      () => {
        if (Date.now() > this.#deadline()) {
          this.#demote?.(`lease not renewed for ${Date.now() - this.#renewedAt} ms (TTL ${this.#ttlMs} ms)`);
        }
      },
      Math.max(50, this.#ttlMs / 40),
    );
    this.#logger.info(
      { node: this.#nodeName, lease: this.#leaseId },
      'cluster: this node is the leader (runs the singleton work)',
    );
    this.emit('elected');
    const why = await reason;
    this.#stop.signal.removeEventListener('abort', stopped);
    clearInterval(guard);
    this.#demote = null;
    this.#leaderSince = null;
    this.#state = this.#stop.signal.aborted ? 'stopped' : 'candidate';
    if (why === 'stopping') this.#logger.info({ node: this.#nodeName }, 'cluster: leadership given up (stopping)');
    else this.#logger.warn({ node: this.#nodeName, reason: why }, 'cluster: this node stopped leading');
    this.emit('demoted', why);
  }

  /** Waits until the leader key is deleted after `revision`, or one TTL has passed (then the txn is tried again). */
  async #waitForVacancy(revision: number, holder: string | undefined): Promise<void> {
    this.#logger.debug({ leader: holder ?? null }, 'cluster: another node leads; watching for a vacancy');
    let watcher: Watcher | null = null;
    const gone = new AbortController();
    const stopped = () => gone.abort();
    this.#stop.signal.addEventListener('abort', stopped, { once: true });
    try {
      const creating = this.#etcd
        .watch()
        .key(this.#key)
        .startRevision(String(revision + 1))
        .only('delete')
        .create();
      // create() waits for a connected stream, forever while etcd is away: a stop must not wait with it
      watcher = await Promise.race([
        creating,
        new Promise<null>((resolve) => gone.signal.addEventListener('abort', () => resolve(null), { once: true })),
      ]);
      if (!watcher) {
        void creating.then((late) => late.cancel()).catch(() => undefined);
        return;
      }
      await Promise.race([
        once(watcher, 'delete', { signal: gone.signal }),
        once(watcher, 'error', { signal: gone.signal }),
        sleep(this.#ttlMs, gone.signal),
      ]).catch(() => undefined);
    } finally {
      gone.abort();
      this.#stop.signal.removeEventListener('abort', stopped);
      // not awaited: etcd3's cancel waits for the server's confirmation, which a watch that just
      // delivered its event (or lost its stream) may never send; the loop must not hang on it
      void watcher?.cancel().catch(() => undefined);
    }
  }
}
