/** Services: ours (manual, template) and the discovered read-only mirrors of the upstream. */
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { Empty, ErrorBox, Field, Loading, PageHeader, StatusBadge } from '../components/ui';
import { DataTable } from '../components/data-table';
import { useAsync } from '../lib/use-async';
import { objectsOf, useLiveReload } from '../lib/events';
import { canWrite, useSession } from '../lib/session';

type Source = '' | 'manual' | 'template' | 'discovered';

export default function Services() {
  const { session } = useSession();
  const [q, setQ] = useState('');
  const [source, setSource] = useState<Source>('');
  const list = useAsync(() => unwrap(api.GET('/api/services', { params: { query: { ...(q ? { q } : {}), ...(source ? { source } : {}) } } })), [q, source]);
  useLiveReload(objectsOf('services'), list.reload);
  useLiveReload((e) => e.type === 'upstream', list.reload);
  return (
    <>
      <PageHeader title="Services">
        {canWrite(session) && (
          <a class="button primary" href="/services/new">
            New service
          </a>
        )}
      </PageHeader>
      <div class="toolbar" role="search">
        <Field label="Search">
          <input type="search" name="q" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
        </Field>
        <Field label="Source">
          <select value={source} onChange={(e) => setSource(e.currentTarget.value as Source)}>
            <option value="">any</option>
            <option value="manual">manual</option>
            <option value="template">template</option>
            <option value="discovered">discovered</option>
          </select>
        </Field>
      </div>
      <ErrorBox error={list.error} />
      <Loading when={list.loading && !list.data} />
      {list.data?.length === 0 && <Empty>No services.</Empty>}
      {list.data && list.data.length > 0 && (
        <DataTable
          rows={list.data}
          rowKey={(s) => s.id}
          rowProps={(s) => ({ 'data-service': s.id })}
          columns={[
            {
              title: 'Service',
              cell: (s) => (
                <>
                  <a href={`/services/${encodeURIComponent(s.id)}`}>{s.name}</a>
                  <div class="muted small">{s.upstream_name ?? s.id}</div>
                </>
              ),
            },
            {
              title: 'Type',
              cell: (s) => (
                <code>
                  {s.protocol}/{s.type}
                </code>
              ),
            },
            { title: 'Source', cell: (s) => s.source },
            { title: 'Status', cell: (s) => <StatusBadge status={s.status} /> },
            { title: 'Used by', cell: (s) => s.used_by.join(', ') || <span class="muted">unused</span> },
          ]}
        />
      )}
    </>
  );
}
