/**
 * Entry points for raw TCP/UDP resources (API.md §4.20) on the plugins screen: Traefik's static
 * entry points and the ones routers use that are missing, whether Gerbil publishes each port, who
 * uses it; "Sync" adds the missing ones to both files, "Apply" starts the job that restarts Traefik
 * and recreates Gerbil, shown as update jobs are (steps, progress, rollback).
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, unwrap } from '../../api/client';
import type { Job } from '../../api/types';
import { Badge, ErrorBox, Loading } from '../../components/ui';
import { DataTable } from '../../components/data-table';
import { jobOf, onLiveEvent } from '../../lib/events';
import { useAsync } from '../../lib/use-async';
import { JobProgress } from '../containers/job-progress';

const APPLY_KIND = 'static_apply';

const yesNo = (value: boolean | null, yes: string, no: string) =>
  value === null ? (
    <span class="muted">unknown</span>
  ) : value ? (
    <Badge tone="ok">{yes}</Badge>
  ) : (
    <Badge tone="warn">{no}</Badge>
  );

/**
 * `writable`: may edit configuration (Sync). Apply is an operations route: offered unless they are
 * known to be closed to this caller (`opsClosed`); the latest apply job is read when they are known
 * open (`opsOpen`), so a configuration screen never causes a 401 of its own.
 */
export function EntryPoints({
  writable,
  opsOpen,
  opsClosed,
  reloadKey = 0,
}: {
  writable: boolean;
  opsOpen: boolean;
  opsClosed: boolean;
  /** changes when the files the list depends on were set again (GET /api/static/settings) */
  reloadKey?: number;
}) {
  const operable = writable && !opsClosed;
  const list = useAsync(() => unwrap(api.GET('/api/static/entrypoints')), [reloadKey]);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [job, setJob] = useState<Job | null>(null);
  // the newest apply job, also one started elsewhere (another tab, the API) while this page is open
  const recent = useAsync(
    () =>
      operable && opsOpen
        ? unwrap(api.GET('/api/jobs', { params: { query: { kind: APPLY_KIND, page: 1, page_size: 1 } } }))
        : Promise.resolve([]),
    [operable, opsOpen],
  );
  useEffect(() => {
    if (recent.data?.[0]) setJob((current) => current ?? recent.data![0]);
  }, [recent.data]);
  useEffect(
    () =>
      onLiveEvent((event) => {
        const next = jobOf(event);
        if (next?.kind !== APPLY_KIND) return;
        setJob((current) =>
          current?.id === next.id || !current || next.created_at >= current.created_at ? next : current,
        );
        if (next.status === 'succeeded' || next.status === 'failed') list.reload();
      }),
    [],
  );

  const run = async (action: () => Promise<void>) => {
    setError(null);
    setNotice(null);
    setBusy(true);
    try {
      await action();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const sync = () =>
    run(async () => {
      const result = await unwrap(api.POST('/api/static/entrypoints/sync', { body: {} }));
      const parts = [
        result.added.length > 0 ? `added ${result.added.join(', ')}` : null,
        result.published.length > 0 ? `published ${result.published.join(', ')} on Gerbil` : null,
      ].filter(Boolean);
      const skipped = result.skipped.map((s) => `${s.name}: ${s.reason}`).join('; ');
      const done =
        parts.length > 0
          ? `Synced: ${parts.join('; ')}. Apply to restart ${result.restart_required.join(' and ')}.`
          : skipped
            ? 'Nothing synced.'
            : 'Nothing to sync: every entry point routers use is in the static config and published.';
      setNotice(skipped ? `${done} Not synced — ${skipped}.` : done);
      list.reload();
    });
  // no compose file configured (every published_on_gerbil is null): Gerbil's ports are unknown, so
  // Apply restarts Traefik only (the server would answer 503 for gerbil)
  const withoutCompose = (list.data?.length ?? 0) > 0 && list.data!.every((e) => e.published_on_gerbil === null);
  const apply = () =>
    run(async () => {
      const started = await unwrap(
        api.POST('/api/static/apply', { body: withoutCompose ? { services: ['traefik'] } : {} }),
      );
      setJob(started);
    });
  const notConfigured = list.error instanceof ApiError && list.error.id === 'not_configured';
  const missing = list.data?.filter((e) => !e.in_static_config || e.published_on_gerbil === false).length ?? 0;

  return (
    <section class="card" data-section="entrypoints">
      <h2>Entry points</h2>
      <p class="muted small">
        Pangolin's raw TCP/UDP resources use entry points <code>tcp-&lt;port&gt;</code>/<code>udp-&lt;port&gt;</code>:
        each must be in Traefik's static config and its port published on Gerbil (Traefik runs in Gerbil's network).{' '}
        <strong>Sync</strong> adds what is missing to both files; <strong>Apply</strong> restarts Traefik and recreates
        Gerbil with the new ports (rolled back if Gerbil does not come up healthy).
      </p>
      {notice && (
        <div class="notice" role="status">
          {notice}
        </div>
      )}
      <ErrorBox error={error} />
      <ErrorBox error={recent.error} title="Apply jobs" />
      {notConfigured ? <p class="muted">{(list.error as ApiError).message}</p> : <ErrorBox error={list.error} />}
      <Loading when={list.loading && !list.data} />
      {list.data && (
        <DataTable
          rows={list.data}
          rowKey={(e) => e.name}
          rowProps={(e) => ({ 'data-entrypoint': e.name })}
          empty="No entry points in the static configuration."
          columns={[
            { title: 'Name', cell: (e) => <code>{e.name}</code> },
            {
              title: 'Address',
              cell: (e) =>
                e.address ? (
                  <code>{e.address}</code>
                ) : (
                  <span class="muted">{e.port ? `${e.protocol} ${e.port}` : '–'}</span>
                ),
            },
            { title: 'Static config', cell: (e) => yesNo(e.in_static_config, 'present', 'missing') },
            {
              title: 'Published on Gerbil',
              // why "not published" may be wrong: a ports: item with a variable Stack Manager could not read
              cell: (e) => (
                <>
                  {yesNo(e.published_on_gerbil, 'published', 'not published')}
                  {e.published_on_gerbil_warnings.length > 0 && (
                    <ul class="small" data-warnings>
                      {e.published_on_gerbil_warnings.map((warning) => (
                        <li key={warning}>{warning}</li>
                      ))}
                    </ul>
                  )}
                </>
              ),
            },
            {
              title: 'Used by',
              cell: (e) =>
                e.used_by.length > 0 ? (
                  e.used_by.join(', ')
                ) : e.routers.length > 0 ? (
                  <span class="small">{e.routers.join(', ')}</span>
                ) : (
                  '–'
                ),
            },
          ]}
        />
      )}
      {writable && (
        <div class="toolbar">
          <button
            type="button"
            disabled={busy || notConfigured}
            onClick={() => void sync()}
            title={missing > 0 ? `${missing} entry point(s) missing or not published` : undefined}
          >
            Sync
          </button>
          {operable && (
            <button
              type="button"
              disabled={
                busy || notConfigured || (job !== null && (job.status === 'queued' || job.status === 'running'))
              }
              onClick={() =>
                confirm(
                  withoutCompose
                    ? 'Restart Traefik now? Connections through it drop for a moment.'
                    : 'Restart Traefik and recreate Gerbil now? Connections through them drop for a moment.',
                ) && void apply()
              }
            >
              {withoutCompose ? 'Apply (restart Traefik)' : 'Apply (restart Traefik, recreate Gerbil)'}
            </button>
          )}
        </div>
      )}
      {job && <JobProgress key={job.id} initial={job} />}
    </section>
  );
}
