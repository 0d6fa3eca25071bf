/** Resource detail: tabs for middlewares (ordered by priority), service, the seven router options, the effective router, and what Traefik runs. */
import { useRef, useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import type { Resource } from '../api/types';
import { ErrorBox, Loading, PageHeader, StatusBadge, Tabs, when } from '../components/ui';
import { useAsync } from '../lib/use-async';
import { useLiveReload } from '../lib/events';
import type { ScreenProps } from '../routes';
import { MiddlewaresTab } from './resource/middlewares-tab';
import { ServiceTab } from './resource/service-tab';
import { RouterOptionsTab } from './resource/router-options-tab';
import { EffectiveTab } from './resource/effective-tab';
import { LiveTab } from './resource/live-tab';
import { LiveBadge } from '../components/live-badge';
import { HistoryLink } from '../components/history-link';
import { canWrite, useSession } from '../lib/session';
import { navigate } from '../lib/router';

type Tab = 'middlewares' | 'service' | 'options' | 'effective' | 'live';

export default function ResourceDetail({ params }: ScreenProps) {
  const id = params.id;
  const { session } = useSession();
  const [tab, setTab] = useState<Tab>('middlewares');
  const [deleteError, setDeleteError] = useState<unknown>(null);
  // no-store: the resource's ETag follows its stored settings, not its `live` state (§4.19), so a
  // revalidation answered 304 would show the state Traefik had when the page was first loaded
  const resource = useAsync(() => unwrap(api.GET('/api/resources/{id}', { params: { path: { id } }, cache: 'no-store' })), [id]);
  // set while this page deletes the resource: its own delete event must not reload it (a 404)
  const deleting = useRef(false);
  useLiveReload(
    (e) => !deleting.current && e.type === 'object' && ((e.data.collection === 'resources' && e.data.id === id) || e.data.collection === 'middlewares' || e.data.collection === 'services'),
    resource.reload,
  );
  useLiveReload((e) => !deleting.current && e.type === 'live' && e.data.resource === id, resource.reload);
  const r = resource.data;
  const writable = canWrite(session) && r?.status === 'active';
  /** Sub-tabs hand back the updated resource, so the page never shows stale data after a write. */
  const onChange = (_updated?: Resource) => resource.reload();

  return (
    <>
      <PageHeader title={r ? r.name : id}>
        <HistoryLink path={`resources/${id}`} />
        {r && r.source === 'local' && canWrite(session) && (
          <a class="button" href={`/resources/${encodeURIComponent(id)}/edit`}>
            Edit
          </a>
        )}
        {r && (r.status === 'disabled' || r.source === 'local') && canWrite(session) && (
          <button
            type="button"
            class="danger"
            onClick={async () => {
              const what = r.source === 'local' ? 'own resource' : 'disabled resource';
              if (!confirm(`Delete the ${what} ${r.id} and all its settings?`)) return;
              deleting.current = true;
              try {
                await unwrap(api.DELETE('/api/resources/{id}', { params: { path: { id } } }));
                navigate('/resources');
              } catch (err) {
                deleting.current = false;
                setDeleteError(err);
              }
            }}
          >
            Delete
          </button>
        )}
      </PageHeader>
      <p>
        <a href="/resources">← all resources</a>
      </p>
      <ErrorBox error={resource.error} />
      <ErrorBox error={deleteError} />
      <Loading when={resource.loading && !r} />
      {r && (
        <>
          <div class="card">
            <dl class="kv">
              <dt>Status</dt>
              <dd>
                <StatusBadge status={r.status} /> {r.missing_since && <span class="muted">missing since {when(r.missing_since)}</span>}
              </dd>
              <dt>In Traefik</dt>
              <dd>
                <LiveBadge live={r.live} />
              </dd>
              <dt>Router</dt>
              <dd>
                <code>{r.router}</code> ({r.source})
              </dd>
              <dt>Rule</dt>
              <dd>
                <code>{r.rule}</code>
              </dd>
              <dt>Entry points</dt>
              <dd>{r.entrypoints.join(', ') || '–'}</dd>
              {r.source !== 'local' && (
                <>
                  <dt>Upstream service</dt>
                  <dd>
                    <code>{r.upstream_service}</code>
                  </dd>
                </>
              )}
            </dl>
            {r.warnings.length > 0 && (
              <div class="notice">
                {r.warnings.map((w) => (
                  <div key={w}>{w}</div>
                ))}
              </div>
            )}
            {r.status === 'disabled' && <div class="notice">This resource is missing upstream: its settings are kept but cannot be changed.</div>}
          </div>
          <Tabs<Tab>
            tabs={[
              ['middlewares', 'Middlewares'],
              ['service', 'Service'],
              ['options', 'Router options'],
              ['effective', 'Effective router'],
              ['live', 'Live in Traefik'],
            ]}
            current={tab}
            onChange={setTab}
          />
          {tab === 'middlewares' && <MiddlewaresTab resource={r} writable={writable} onChange={onChange} />}
          {tab === 'service' && <ServiceTab resource={r} writable={writable} onChange={onChange} />}
          {tab === 'options' && <RouterOptionsTab resource={r} writable={writable} onChange={onChange} />}
          {tab === 'effective' && <EffectiveTab resource={r} />}
          {tab === 'live' && <LiveTab resource={r} />}
        </>
      )}
    </>
  );
}
