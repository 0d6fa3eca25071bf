/** Containers of the stack: state, start/stop/restart, image update check, and update jobs with live progress. */
import { useEffect, useState } from 'preact/hooks';
import { api, requestJson, unwrap } from '../api/client';
import type { Job } from '../api/types';
import { Badge, ErrorBox, Loading, PageHeader, StatusBadge, when } from '../components/ui';
import { useAsync } from '../lib/use-async';
import { onLiveEvent, useLiveReload } from '../lib/events';
import { canWrite, useSession } from '../lib/session';

function JobProgress({ initial }: { initial: Job }) {
  const [job, setJob] = useState(initial);
  useEffect(() => {
    // the event stream carries the Job on every step change; one GET covers steps sent before we listened
    const off = onLiveEvent((event) => {
      if (event.type === 'job' && event.data.id === initial.id) setJob(event.data as unknown as Job);
    });
    requestJson<Job>('GET', `/api/jobs/${encodeURIComponent(initial.id)}`).then(setJob, () => undefined);
    return off;
  }, [initial.id]);
  const error = job.error;
  return (
    <section class="card" data-job={job.id} data-job-status={job.status}>
      <h3>
        Update job <code>{job.id}</code> <StatusBadge status={job.status} />
      </h3>
      <div class="progress" role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(job.progress * 100)}>
        <span style={{ width: `${Math.round(job.progress * 100)}%` }} />
      </div>
      {error && <div class="error-box">{error}</div>}
      <ol>
        {job.steps.map((step, index) => (
          <li key={index}>
            {step.service ?? 'job'}: {step.step} <StatusBadge status={step.status} /> {step.message && <span class="muted small">{step.message}</span>}
          </li>
        ))}
      </ol>
    </section>
  );
}

export default function Containers() {
  const { session } = useSession();
  const writable = canWrite(session);
  const list = useAsync(() => unwrap(api.GET('/api/container/containers')), []);
  const [checkUpdates, setCheckUpdates] = useState(0);
  const updates = useAsync(() => (checkUpdates ? unwrap(api.GET('/api/container/updates', { params: { query: checkUpdates > 1 ? { refresh: 'true' } : {} } })) : Promise.resolve(null)), [checkUpdates]);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [jobs, setJobs] = useState<Job[]>([]);
  useLiveReload((e) => e.type === 'container' || (e.type === 'job' && (e.data.status === 'succeeded' || e.data.status === 'failed')), list.reload);
  const act = async (name: string, action: () => Promise<unknown>) => {
    setError(null);
    setBusy(name);
    try {
      await action();
      list.reload();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(null);
    }
  };
  const update = (names: string[]) =>
    act(names.join(','), async () => {
      const job = await requestJson<Job>('POST', '/api/container/update', { services: names, backup: true });
      setJobs((current) => [job, ...current]);
    });
  const updateFor = (name: string) => updates.data?.find((u) => u.service === name);

  return (
    <>
      <PageHeader title="Containers">
        <button type="button" onClick={() => setCheckUpdates((n) => n + 1)} disabled={updates.loading && checkUpdates > 0}>
          {checkUpdates ? 'Check again (refresh)' : 'Check for image updates'}
        </button>
      </PageHeader>
      <ErrorBox error={error} />
      <ErrorBox error={updates.error} title="Update check" />
      {jobs.map((job) => (
        <JobProgress key={job.id} initial={job} />
      ))}
      <ErrorBox error={list.error} />
      <Loading when={list.loading && !list.data} />
      {list.data && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>Container</th>
                <th>State</th>
                <th>Image</th>
                <th>Update</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {list.data.length === 0 && (
                <tr>
                  <td colSpan={5} class="muted">
                    No stack containers.
                  </td>
                </tr>
              )}
              {list.data.map((c) => {
                const u = updateFor(c.name);
                return (
                  <tr key={c.name} data-container={c.name}>
                    <td>
                      {c.name}
                      <div class="muted small">{c.status}</div>
                    </td>
                    <td>
                      <StatusBadge status={c.state} /> {c.health && c.health !== 'none' && <StatusBadge status={c.health} />}
                      <div class="muted small">since {when(c.started_at)}</div>
                    </td>
                    <td>
                      <code class="small">{c.image ?? '–'}</code>
                    </td>
                    <td>
                      {u ? u.update_available === true ? <Badge tone="warn">update available</Badge> : u.update_available === false ? <Badge tone="ok">up to date</Badge> : <span class="muted small">{u.error ?? 'unknown'}</span> : <span class="muted">–</span>}
                    </td>
                    <td class="actions">
                      {writable && c.state !== 'missing' && (
                        <>
                          {c.state !== 'running' && (
                            <button type="button" disabled={busy === c.name} onClick={() => act(c.name, () => unwrap(api.POST('/api/container/container/{action}', { params: { path: { action: 'start' } }, body: { container_name: c.name } })))}>
                              Start
                            </button>
                          )}
                          {c.state === 'running' && (
                            <button type="button" disabled={busy === c.name} onClick={() => confirm(`Stop ${c.name}?`) && act(c.name, () => unwrap(api.POST('/api/container/container/{action}', { params: { path: { action: 'stop' } }, body: { container_name: c.name } })))}>
                              Stop
                            </button>
                          )}
                          <button type="button" disabled={busy === c.name} onClick={() => act(c.name, () => unwrap(api.POST('/api/container/container/{action}', { params: { path: { action: 'restart' } }, body: { container_name: c.name } })))}>
                            Restart
                          </button>
                          {u?.update_available && (
                            <button type="button" class="primary" disabled={busy !== null} onClick={() => confirm(`Update ${c.name} to the latest image? A pre-update backup is taken first.`) && update([c.name])}>
                              Update
                            </button>
                          )}
                        </>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
