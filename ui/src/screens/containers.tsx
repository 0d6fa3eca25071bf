/** Containers of the stack: state, start/stop/restart, image update check, and update jobs with live progress. */
import { useEffect, useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import type { ImageUpdate, Job } from '../api/types';
import { Badge, ErrorBox, Loading, PageHeader, StatusBadge, when } from '../components/ui';
import { DataTable } from '../components/data-table';
import { useAsync } from '../lib/use-async';
import { jobOf, onLiveEvent, useLiveReload } from '../lib/events';
import { JobProgress } from './containers/job-progress';
import { canWrite, useSession } from '../lib/session';

/** Update jobs shown: the newest first, at most this many. */
const SHOWN_JOBS = 3;

function mergeJobs(current: Job[], more: Job[]): Job[] {
  const byId = new Map(current.map((job) => [job.id, job]));
  for (const job of more) if (!byId.has(job.id)) byId.set(job.id, job);
  return [...byId.values()].sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0)).slice(0, SHOWN_JOBS);
}

/** The update check's answer for one container: available, up to date, or why it is not known. */
function UpdateState({ update }: { update: ImageUpdate | undefined }) {
  if (!update) return <span class="muted">–</span>;
  if (update.update_available === true) return <Badge tone="warn">update available</Badge>;
  if (update.update_available === false) return <Badge tone="ok">up to date</Badge>;
  return <span class="muted small">{update.error ?? 'unknown'}</span>;
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
  // jobs that began before this page opened (a reload, another operator, the API) are shown too
  const recent = useAsync(() => unwrap(api.GET('/api/jobs', { params: { query: { kind: 'container_update', page: 1, page_size: SHOWN_JOBS } } })), []);
  useEffect(() => {
    if (recent.data) setJobs((current) => mergeJobs(current, recent.data!));
  }, [recent.data]);
  useEffect(
    () =>
      onLiveEvent((event) => {
        const job = jobOf(event);
        if (job?.kind === 'container_update') setJobs((current) => mergeJobs(current, [job]));
      }),
    [],
  );
  useLiveReload((e) => e.type === 'container', list.reload);
  // a finished update changed containers and digests: the list and a shown update check are stale
  useLiveReload(
    (e) => e.type === 'job' && (e.data.status === 'succeeded' || e.data.status === 'failed'),
    () => {
      list.reload();
      if (checkUpdates) updates.reload();
    },
  );
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
      const job = await unwrap(api.POST('/api/container/update', { body: { services: names, backup: true } }));
      setJobs((current) => mergeJobs([job], current));
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
      <ErrorBox error={recent.error} title="Update jobs" />
      {jobs.map((job) => (
        <JobProgress key={job.id} initial={job} />
      ))}
      <ErrorBox error={list.error} />
      <Loading when={list.loading && !list.data} />
      {list.data && (
        <DataTable
          rows={list.data}
          rowKey={(c) => c.name}
          rowProps={(c) => ({ 'data-container': c.name })}
          empty="No stack containers."
          columns={[
            {
              title: 'Container',
              cell: (c) => (
                <>
                  {c.name}
                  <div class="muted small">{c.status}</div>
                </>
              ),
            },
            {
              title: 'State',
              cell: (c) => (
                <>
                  <StatusBadge status={c.state} /> {c.health && c.health !== 'none' && <StatusBadge status={c.health} />}
                  <div class="muted small">since {when(c.started_at)}</div>
                </>
              ),
            },
            { title: 'Image', cell: (c) => <code class="small">{c.image ?? '–'}</code> },
            { title: 'Update', cell: (c) => <UpdateState update={updateFor(c.name)} /> },
            {
              title: '',
              class: 'actions',
              cell: (c) =>
                writable &&
                c.state !== 'missing' && (
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
                    {updateFor(c.name)?.update_available && (
                      <button type="button" class="primary" disabled={busy !== null} onClick={() => confirm(`Update ${c.name} to the latest image? A pre-update backup is taken first.`) && update([c.name])}>
                        Update
                      </button>
                    )}
                  </>
                ),
            },
          ]}
        />
      )}
    </>
  );
}
