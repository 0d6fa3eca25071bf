/**
 * What the provider polls are answered, logged once per change (API.md §2.11, issue 24 item 4).
 * Every Traefik instance polls every few seconds forever: a line per poll at info would bury the
 * rest of the log (127 lines in 30 s with Pangolin unreachable). The polls themselves log at debug
 * (core/request-log.ts); this writes one line when their answer changes: the first 502 (no config
 * produced yet), the first stale answer, and the first current one after either.
 */
import type { FastifyBaseLogger } from 'fastify';

/** ok: a current config; stale: the last good (or last run's) one; unavailable: 502, none at all. */
export type AnswerState = 'ok' | 'stale' | 'unavailable';

export class ProviderAnswerLog {
  private state: AnswerState = 'ok';

  constructor(
    private readonly log: FastifyBaseLogger,
    /** The upstream's last error, named in the line. */
    private readonly upstreamError: () => string | null,
    /** True while the config served is the last run's snapshot (startup, not a failure). */
    private readonly fromSnapshot: () => boolean,
  ) {}

  /** Called per poll with its answer: a comparison, and a line only when the state changes. */
  note(state: AnswerState): void {
    if (state === this.state) return;
    const previous = this.state;
    this.state = state;
    const fields = { provider_state: state, previous, upstream_error: this.upstreamError() };
    const quiet = 'polls are not logged one by one (debug), the next line comes when this changes';
    if (state === 'unavailable')
      this.log.warn(fields, `provider polls answered 502: no configuration has been produced yet; ${quiet}`);
    else if (state === 'stale' && this.fromSnapshot())
      this.log.info(fields, `provider polls served the last run's configuration until this run's first; ${quiet}`);
    else if (state === 'stale')
      this.log.warn(fields, `provider polls served the last good configuration, stale: the upstream fails; ${quiet}`);
    else this.log.info(fields, 'provider polls served a current configuration again');
  }
}
