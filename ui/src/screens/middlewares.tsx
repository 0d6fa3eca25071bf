/** Middlewares: list with type filter and search; create (from a template or blank) and edit on their own page. */
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { Badge, Empty, ErrorBox, Field, Loading, PageHeader } from '../components/ui';
import { DataTable } from '../components/data-table';
import { useAsync } from '../lib/use-async';
import { objectsOf, useLiveReload } from '../lib/events';
import { canWrite, useSession } from '../lib/session';
import { MIDDLEWARE_TYPES } from './objects/middleware-forms';
import type { MiddlewareType } from '../api/types';
import { canImport, MmImport } from './mm-import';

export default function Middlewares() {
  const { session } = useSession();
  const [q, setQ] = useState('');
  const [type, setType] = useState('');
  const list = useAsync(() => unwrap(api.GET('/api/middlewares', { params: { query: { ...(q ? { q } : {}), ...(type ? { type: type as MiddlewareType } : {}) } } })), [q, type]);
  useLiveReload(objectsOf('middlewares', 'resources'), list.reload);
  return (
    <>
      <PageHeader title="Middlewares">
        {canImport(session) && <MmImport onImported={list.reload} />}
        {canWrite(session) && (
          <a class="button primary" href="/middlewares/new">
            New middleware
          </a>
        )}
      </PageHeader>
      <div class="toolbar" role="search">
        <Field label="Search">
          <input type="search" name="q" value={q} placeholder="id or name" onInput={(e) => setQ(e.currentTarget.value)} />
        </Field>
        <Field label="Type">
          <select value={type} onChange={(e) => setType(e.currentTarget.value)}>
            <option value="">any</option>
            {MIDDLEWARE_TYPES.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </Field>
      </div>
      <ErrorBox error={list.error} />
      <Loading when={list.loading && !list.data} />
      {list.data?.length === 0 && <Empty>No middlewares yet.</Empty>}
      {list.data && list.data.length > 0 && (
        <DataTable
          rows={list.data}
          rowKey={(m) => m.id}
          rowProps={(m) => ({ 'data-middleware': m.id })}
          columns={[
            {
              title: 'Middleware',
              cell: (m) => (
                <>
                  <a href={`/middlewares/${encodeURIComponent(m.id)}`}>{m.name}</a>
                  <div class="muted small">{m.id}</div>
                </>
              ),
            },
            { title: 'Type', cell: (m) => <code>{m.type}</code> },
            { title: 'Used by', cell: (m) => (m.used_by.length ? m.used_by.map((p) => p.replace(/^\/api\//, '')).join(', ') : <span class="muted">unused</span>) },
            { title: 'Warnings', cell: (m) => m.warnings.map((w) => <Badge key={w} tone="warn">{w}</Badge>) },
          ]}
        />
      )}
    </>
  );
}
