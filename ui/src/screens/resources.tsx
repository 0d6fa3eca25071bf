/**
 * Resources: search by id/name/host, filter by status, source and state in Traefik (§4.19); each row
 * opens the detail page. The Traefik column follows `live` events, so a router Traefik refuses shows
 * without a reload.
 */
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { Empty, ErrorBox, Loading, PageHeader, StatusBadge, Field } from '../components/ui';
import { DataTable } from '../components/data-table';
import { useAsync } from '../lib/use-async';
import { objectsOf, useLiveReload } from '../lib/events';
import { LIVE_STATES, type LiveState } from '../api/live';
import { LiveBadge } from '../components/live-badge';
import { canWrite, useSession } from '../lib/session';

type StatusFilter = 'all' | 'active' | 'disabled';

export default function Resources() {
  const [q, setQ] = useState('');
  const [status, setStatus] = useState<StatusFilter>('all');
  const [source, setSource] = useState<'' | 'pangolin' | 'traefik' | 'local'>('');
  const { session } = useSession();
  const [live, setLive] = useState<'' | LiveState>('');
  const list = useAsync(
    () => unwrap(api.GET('/api/resources', { params: { query: { status, ...(q ? { q } : {}), ...(source ? { source } : {}), ...(live ? { live } : {}) } } })),
    [q, status, source, live],
  );
  useLiveReload(objectsOf('resources', 'middlewares'), list.reload);
  // a check changes many states at once: the events of one check coalesce into one reload
  useLiveReload((e) => e.type === 'live', list.reload);
  return (
    <>
      <PageHeader title="Resources">
        {canWrite(session) && (
          <a class="button primary" href="/resources/new">
            New resource
          </a>
        )}
      </PageHeader>
      <div class="toolbar" role="search">
        <Field label="Search">
          <input type="search" name="q" placeholder="id, name or host" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
        </Field>
        <Field label="Status">
          <select name="status" value={status} onChange={(e) => setStatus(e.currentTarget.value as StatusFilter)}>
            <option value="all">all</option>
            <option value="active">active</option>
            <option value="disabled">disabled</option>
          </select>
        </Field>
        <Field label="Source">
          <select name="source" value={source} onChange={(e) => setSource(e.currentTarget.value as typeof source)}>
            <option value="">any</option>
            <option value="pangolin">pangolin</option>
            <option value="traefik">traefik</option>
            <option value="local">local (own)</option>
          </select>
        </Field>
        <Field label="In Traefik">
          <select name="live" value={live} onChange={(e) => setLive(e.currentTarget.value as typeof live)}>
            <option value="">any</option>
            {LIVE_STATES.map((state) => (
              <option key={state} value={state}>
                {state}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <ErrorBox error={list.error} />
      <Loading when={list.loading && !list.data} />
      {list.data && list.data.length === 0 && <Empty>No resources match. Resources are discovered from the active data source, or made here with New resource.</Empty>}
      {list.data && list.data.length > 0 && (
        <DataTable
          rows={list.data}
          rowKey={(resource) => resource.id}
          rowProps={(resource) => ({ 'data-resource': resource.id })}
          columns={[
            {
              title: 'Resource',
              cell: (resource) => (
                <>
                  <a href={`/resources/${encodeURIComponent(resource.id)}`}>{resource.name}</a>
                  <div class="muted small">{resource.source}</div>
                </>
              ),
            },
            { title: 'Host', cell: (resource) => resource.host ?? '–' },
            { title: 'Status', cell: (resource) => <StatusBadge status={resource.status} /> },
            { title: 'Traefik', cell: (resource) => <LiveBadge live={resource.live} /> },
            { title: 'Middlewares', cell: (resource) => resource.middlewares.map((m) => m.id).concat(resource.external_middlewares.map((m) => m.name)).join(', ') || '–' },
            { title: 'Service', cell: (resource) => resource.service_id ?? <span class="muted">{resource.upstream_service}</span> },
          ]}
        />
      )}
    </>
  );
}
