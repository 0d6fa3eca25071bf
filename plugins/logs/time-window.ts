/**
 * The window a scan counts requests in. Its own module so the scan worker's module graph stays small
 * (time-range.ts brings the query schemas and the error catalogue): the worker starts per scan.
 */
export interface TimeWindow {
  /** Inclusive lower bound in ms, or null for open. */
  since: number | null;
  /** Inclusive upper bound in ms, or null for open. */
  until: number | null;
}

export const inWindow = (ms: number, window: TimeWindow): boolean =>
  (window.since === null || ms >= window.since) && (window.until === null || ms <= window.until);
