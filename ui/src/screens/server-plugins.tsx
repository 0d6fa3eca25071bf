/** Server plugins (API.md §4.16, §6): the third-party plugins of Stack Manager itself — status, the error that stopped one, its routes. */
import { api, unwrap } from '../api/client';
import type { Reply } from '../api/types';
import { Empty, ErrorBox, Loading, PageHeader, StatusBadge, when } from '../components/ui';
import { DataTable } from '../components/data-table';
import { useAsync } from '../lib/use-async';

type ServerPlugin = Reply<'/api/system/plugins', 'get'>[number];

export default function ServerPlugins() {
  const list = useAsync(() => unwrap(api.GET('/api/system/plugins')), []);
  return (
    <>
      <PageHeader title="Server plugins" />
      <p class="muted small">
        Plugins of Stack Manager itself, loaded from <code>plugins.dir</code> as <code>plugins.enabled</code> names them (not Traefik plugins). A change takes effect on restart.
      </p>
      <ErrorBox error={list.error} />
      <Loading when={list.loading && !list.data} />
      {list.data && list.data.length === 0 && <Empty>No third-party plugins are enabled.</Empty>}
      {list.data && list.data.length > 0 && (
        <DataTable<ServerPlugin>
          rows={list.data}
          rowKey={(p) => p.name}
          rowProps={(p) => ({ 'data-server-plugin': p.name })}
          columns={[
            {
              title: 'Plugin',
              cell: (p) => (
                <>
                  {p.name} {p.version && <span class="muted small">{p.version}</span>}
                  <div class="muted small">{p.dir ?? 'no directory'}</div>
                </>
              ),
            },
            {
              title: 'Status',
              cell: (p) => (
                <>
                  <StatusBadge status={p.status} />
                  {p.error && <div class="field-error">{p.error.message}</div>}
                  {p.loaded_at && <div class="muted small">since {when(p.loaded_at)}</div>}
                </>
              ),
            },
            { title: 'API', cell: (p) => p.api_version ?? '–' },
            {
              title: 'Routes',
              cell: (p) =>
                p.routes.length ? (
                  <ul class="plain small">
                    {p.routes.map((r) => (
                      <li key={r.method + r.url}>
                        <code>
                          {r.method} {r.url}
                        </code>
                      </li>
                    ))}
                  </ul>
                ) : (
                  <span class="muted">{p.prefix}</span>
                ),
            },
          ]}
        />
      )}
    </>
  );
}
