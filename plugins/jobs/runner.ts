/**
 * The in-memory job runner (API.md §4.14): groups start detached work that outlives the HTTP
 * request, report it as steps, and callers poll GET /api/jobs/:id (or watch the event stream).
 * Jobs are kept per §2.10 (last 100 and at most 24 h after they finished) and lost on restart.
 */
import type { FastifyBaseLogger } from 'fastify';
import { monotonicFactory } from 'ulid';
import { jobErrors } from './errors.ts';
import type { JobStatus, JobStepView, JobView, StepStatus } from './schemas.ts';

export interface PlannedStep {
  service: string | null;
  step: string;
}

export interface JobSpec {
  kind: string;
  params: Record<string, unknown>;
  /** The steps known up front, in the order they run; progress counts them. */
  steps: PlannedStep[];
  /** One job of this kind at a time: a second start while one is queued or running → 409 `busy`. */
  exclusive?: boolean;
}

/** One step of a running job; every call is one visible change (log line + event). */
export interface StepHandle {
  begin(message: string): void;
  /** A new message while the step runs (e.g. "waiting for healthy, 12 s"). */
  say(message: string): void;
  ok(message: string): void;
  fail(message: string): void;
  skip(message: string): void;
  readonly status: StepStatus;
}

export interface JobContext {
  readonly id: string;
  /** Aborted when the app closes: stop at the next safe point (roll back if needed). */
  readonly signal: AbortSignal;
  readonly log: FastifyBaseLogger;
  /** A planned step. */
  step(service: string | null, step: string): StepHandle;
  /** A step not planned up front (rollback), inserted after the last step of `service`. */
  addStep(service: string | null, step: string): StepHandle;
}

export type JobWork = (context: JobContext) => Promise<void>;

export interface JobRunnerOptions {
  now: () => Date;
  log: FastifyBaseLogger;
  /** Jobs kept (API.md §2.10): the newest `keepLast` … */
  keepLast?: number;
  /** … that finished less than `keepMs` ago (running jobs are always kept). */
  keepMs?: number;
}

interface JobRecord {
  view: JobView;
  abort: AbortController;
  done: Promise<void>;
}

const FINISHED = new Set<JobStatus>(['succeeded', 'failed']);
const STEP_DONE = new Set<StepStatus>(['ok', 'failed', 'skipped']);

export class JobRunner {
  private readonly jobs = new Map<string, JobRecord>();
  private readonly newUlid = monotonicFactory();
  private readonly listeners = new Set<(job: JobView) => void>();
  private readonly keepLast: number;
  private readonly keepMs: number;

  constructor(private readonly options: JobRunnerOptions) {
    this.keepLast = options.keepLast ?? 100;
    this.keepMs = options.keepMs ?? 24 * 3_600_000;
  }

  /** Called with a snapshot of the job on every change (status, step, progress). */
  onChange(listener: (job: JobView) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Creates the job (status `queued`) and runs `work` detached on the next turn of the event loop;
   * the returned snapshot is what the 202 answer shows.
   */
  start(spec: JobSpec, work: JobWork): JobView {
    this.prune();
    if (spec.exclusive) {
      const active = [...this.jobs.values()].find((r) => r.view.kind === spec.kind && !FINISHED.has(r.view.status));
      if (active) throw jobErrors.busy(spec.kind, active.view.id);
    }
    const now = this.options.now();
    const view: JobView = {
      id: `job-${this.newUlid(now.getTime()).toLowerCase()}`,
      kind: spec.kind,
      status: 'queued',
      progress: 0,
      params: structuredClone(spec.params),
      steps: spec.steps.map((s) => ({
        service: s.service,
        step: s.step,
        status: 'pending',
        message: '',
        started_at: null,
        finished_at: null,
      })),
      error: null,
      created_at: now.toISOString(),
      started_at: null,
      finished_at: null,
    };
    const record: JobRecord = { view, abort: new AbortController(), done: Promise.resolve() };
    this.jobs.set(view.id, record);
    this.changed(record, { event: 'job queued' });
    // setImmediate: the caller's reply goes out first, and nothing ties the work to the request
    record.done = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.run(record, work));
    return structuredClone(view);
  }

  /** Jobs after filters, newest first. */
  list(filter: { kind?: string; status?: JobStatus } = {}): JobView[] {
    this.prune();
    return [...this.jobs.values()]
      .reverse()
      .map((r) => r.view)
      .filter((v) => (!filter.kind || v.kind === filter.kind) && (!filter.status || v.status === filter.status))
      .map((v) => structuredClone(v));
  }

  get(id: string): JobView {
    this.prune();
    const record = this.jobs.get(id);
    if (!record) throw jobErrors.notFound(id);
    return structuredClone(record.view);
  }

  /** Resolves when the job has finished (tests, shutdown). */
  async settled(id: string): Promise<JobView> {
    const record = this.jobs.get(id);
    if (!record) throw jobErrors.notFound(id);
    await record.done;
    return structuredClone(record.view);
  }

  /**
   * Shutdown: running jobs are told to stop (they roll back at their next safe point) and waited
   * for up to `graceMs`; a job still running then is marked failed, so its record says so.
   */
  async close(graceMs: number): Promise<void> {
    const active = [...this.jobs.values()].filter((r) => !FINISHED.has(r.view.status));
    if (active.length === 0) return;
    this.options.log.warn(
      { jobs: active.map((r) => r.view.id), grace_ms: graceMs },
      'shutdown: stopping running jobs (they roll back what they changed)',
    );
    for (const record of active) record.abort.abort(new Error('the server is shutting down'));
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([Promise.all(active.map((r) => r.done)), grace]);
    clearTimeout(timer);
    for (const record of active) {
      if (FINISHED.has(record.view.status)) continue;
      this.finish(
        record,
        'failed',
        `the server shut down while the job was running (not finished within ${graceMs} ms); check the containers it touched`,
      );
      this.options.log.error({ job_id: record.view.id }, 'shutdown: job did not finish within the grace period');
    }
  }

  private async run(record: JobRecord, work: JobWork): Promise<void> {
    const { view } = record;
    view.status = 'running';
    view.started_at = this.options.now().toISOString();
    this.changed(record, { event: 'job started' });
    const log = this.options.log.child({ job_id: view.id, kind: view.kind });
    try {
      await work({
        id: view.id,
        signal: record.abort.signal,
        log,
        step: (service, step) => this.handle(record, this.findStep(record, service, step)),
        addStep: (service, step) => this.handle(record, this.insertStep(record, service, step)),
      });
      if (!FINISHED.has(view.status)) this.finish(record, 'succeeded', null);
    } catch (err) {
      if (!FINISHED.has(view.status)) this.finish(record, 'failed', (err as Error).message || String(err));
    }
  }

  private finish(record: JobRecord, status: 'succeeded' | 'failed', error: string | null): void {
    const { view } = record;
    const now = this.options.now().toISOString();
    for (const step of view.steps) {
      if (step.status === 'running')
        Object.assign(step, { status: 'failed', message: step.message || (error ?? 'interrupted'), finished_at: now });
      if (step.status === 'pending')
        Object.assign(step, {
          status: 'skipped',
          message: status === 'failed' ? 'skipped: the job failed' : 'skipped',
          finished_at: now,
        });
    }
    view.status = status;
    view.error = error;
    view.progress = 1;
    view.finished_at = now;
    this.changed(record, { event: status === 'succeeded' ? 'job succeeded' : 'job failed', error });
  }

  private findStep(record: JobRecord, service: string | null, name: string): JobStepView {
    const step = record.view.steps.find((s) => s.service === service && s.step === name);
    if (!step) throw new Error(`job ${record.view.id} has no step ${name} for ${service ?? 'the job'}`);
    return step;
  }

  private insertStep(record: JobRecord, service: string | null, name: string): JobStepView {
    const step: JobStepView = {
      service,
      step: name,
      status: 'pending',
      message: '',
      started_at: null,
      finished_at: null,
    };
    const steps = record.view.steps;
    let last = -1;
    steps.forEach((s, i) => {
      if (s.service === service) last = i;
    });
    steps.splice(last === -1 ? steps.length : last + 1, 0, step);
    return step;
  }

  private handle(record: JobRecord, step: JobStepView): StepHandle {
    const set = (status: StepStatus, message: string) => {
      const now = this.options.now().toISOString();
      if (status === 'running' && !step.started_at) step.started_at = now;
      if (STEP_DONE.has(status)) step.finished_at = now;
      step.status = status;
      step.message = message;
      this.changed(record, { event: 'job step', service: step.service, step: step.step, status, message });
    };
    return {
      begin: (message) => set('running', message),
      say: (message) => set(step.status, message),
      ok: (message) => set('ok', message),
      fail: (message) => set('failed', message),
      skip: (message) => set('skipped', message),
      get status() {
        return step.status;
      },
    };
  }

  /** Recomputes progress, logs what happened and tells the listeners. */
  private changed(record: JobRecord, what: { event: string } & Record<string, unknown>): void {
    const { view } = record;
    if (!FINISHED.has(view.status)) {
      const done = view.steps.filter((s) => STEP_DONE.has(s.status)).length;
      view.progress = view.steps.length === 0 ? 0 : Math.round((done / view.steps.length) * 1000) / 1000;
    }
    const { event, ...fields } = what;
    const level = fields.status === 'failed' || event === 'job failed' ? 'warn' : 'info';
    this.options.log[level]({ job_id: view.id, kind: view.kind, progress: view.progress, ...fields }, event);
    if (this.listeners.size === 0) return;
    const snapshot = structuredClone(view);
    for (const listener of this.listeners) {
      try {
        listener(snapshot);
      } catch (err) {
        this.options.log.error({ err, job_id: view.id }, 'job change listener failed');
      }
    }
  }

  /** API.md §2.10: keep finished jobs only while among the newest `keepLast` and younger than `keepMs`. */
  private prune(): void {
    const cutoff = this.options.now().getTime() - this.keepMs;
    let rank = 0;
    for (const [id, record] of [...this.jobs.entries()].reverse()) {
      rank++;
      const { view } = record;
      if (!FINISHED.has(view.status)) continue;
      if (rank > this.keepLast || Date.parse(view.finished_at ?? view.created_at) < cutoff) this.jobs.delete(id);
    }
  }
}
