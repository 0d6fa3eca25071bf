/**
 * One update job as it runs: status, progress bar, every step with its message, and the end as it
 * is — succeeded, or failed with the server's error and whether the old container was rolled back.
 * The event stream carries the whole Job on every step change; while the stream is not live, the
 * job is polled instead, so a dropped stream never freezes the view.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, unwrap } from '../../api/client';
import type { Job } from '../../api/types';
import { ErrorBox, StatusBadge } from '../../components/ui';
import { jobOf, liveState, onLiveEvent } from '../../lib/events';

const POLL_MS = 2_000;

const isFinished = (job: Job) => job.status === 'succeeded' || job.status === 'failed';

/** How far a job has got: a GET may answer after a newer event, and must not move the view back. */
function advance(job: Job): number {
  if (isFinished(job)) return Number.MAX_SAFE_INTEGER;
  return job.steps.reduce((sum, step) => sum + (step.status === 'pending' ? 0 : step.status === 'running' ? 1 : 2), job.status === 'running' ? 1 : 0);
}
const later = (current: Job, next: Job) => (advance(next) >= advance(current) ? next : current);

/** An apply job (API.md §4.20) recreates containers on the same image; an update moves them to a new one. */
const isApply = (job: Job) => job.kind === 'static_apply';

/** What the end of a failed job means for the operator, from its rollback steps. */
function failureSummary(job: Job): string | null {
  if (job.status !== 'failed') return null;
  const rollbacks = job.steps.filter((s) => s.step === 'rollback');
  if (rollbacks.length === 0) return 'Nothing was changed: no container had been replaced when the job stopped.';
  const failed = rollbacks.filter((s) => s.status === 'failed');
  const names = (steps: Job['steps']) => steps.map((s) => s.service ?? 'job').join(', ');
  if (failed.length > 0) return `Rollback FAILED for ${names(failed)}: check these containers by hand.`;
  return `Rolled back: ${names(rollbacks)} run${rollbacks.length === 1 ? 's' : ''} ${isApply(job) ? 'the previous container' : 'the previous image'} again.`;
}

export function JobProgress({ initial }: { initial: Job }) {
  const [job, setJob] = useState(initial);
  const [pollError, setPollError] = useState<unknown>(null);
  const finished = isFinished(job);

  useEffect(() => {
    return onLiveEvent((event) => {
      const next = jobOf(event);
      if (next?.id === initial.id) setJob((current) => later(current, next));
    });
  }, [initial.id]);

  useEffect(() => {
    if (finished) return;
    const refresh = () =>
      unwrap(api.GET('/api/jobs/{id}', { params: { path: { id: initial.id } } })).then(
        (next) => {
          setPollError(null);
          setJob((current) => later(current, next));
        },
        (err: unknown) => setPollError(err),
      );
    // one GET covers the steps sent before we listened; then poll only while the stream is not live
    void refresh();
    const timer = setInterval(() => liveState() !== 'live' && void refresh(), POLL_MS);
    return () => clearInterval(timer);
  }, [initial.id, finished]);

  const percent = Math.round(job.progress * 100);
  const summary = failureSummary(job);
  return (
    <section class="card" data-job={job.id} data-job-status={job.status} aria-live="polite">
      <h3>
        {isApply(job) ? 'Apply of' : 'Update of'} {Array.isArray(job.params.services) ? job.params.services.join(', ') : job.kind} <StatusBadge status={job.status} /> <code class="small muted">{job.id}</code>
      </h3>
      <div class="progress" role="progressbar" aria-label={isApply(job) ? 'Apply progress' : 'Update progress'} aria-valuemin={0} aria-valuemax={100} aria-valuenow={percent}>
        <span style={{ width: `${percent}%` }} />
      </div>
      {job.status === 'succeeded' && <p class="job-summary">{isApply(job) ? 'Applied' : 'Updated'}: every step finished.</p>}
      {job.error && (
        <div class="error-box" role="alert">
          <strong>{isApply(job) ? 'Apply failed' : 'Update failed'}</strong> {job.error}
        </div>
      )}
      {summary && <p class="job-summary" data-rollback={job.steps.some((s) => s.step === 'rollback')}>{summary}</p>}
      <ErrorBox error={pollError} title="Job status" />
      <ol class="job-steps">
        {job.steps.map((step, index) => (
          <li key={index} data-step={`${step.service ?? 'job'}:${step.step}`} data-step-status={step.status}>
            {step.service ?? 'job'}: {step.step} <StatusBadge status={step.status} /> {step.message && <span class="muted small">{step.message}</span>}
          </li>
        ))}
      </ol>
    </section>
  );
}
