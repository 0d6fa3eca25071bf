/** Traefik explorer: Traefik's overview and entry points, then routers, services and middlewares as Traefik reports them, with their errors and partial answers. */
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { Badge, ErrorBox, Field, Json, Loading, PageHeader, StatusBadge, Tabs } from '../components/ui';
import { DataTable } from '../components/data-table';
import { useAsync } from '../lib/use-async';
import { ExplorerSummary } from './explorer/summary';

type Kind = 'routers' | 'services' | 'middlewares';
type Protocol = 'http' | 'tcp' | 'udp';
type Item = { name?: string; status?: string; error?: string[] | string; provider?: string; rule?: string; type?: string; service?: string; [key: string]: unknown };

export default function Explorer() {
  const [kind, setKind] = useState<Kind>('routers');
  const [protocol, setProtocol] = useState<Protocol>('http');
  const [search, setSearch] = useState('');
  const [open, setOpen] = useState<string | null>(null);
  const version = useAsync(() => unwrap(api.GET('/api/proxy/version')), []);
  const list = useAsync(async () => {
    const query = { type: protocol, ...(search ? { search } : {}) };
    const path = `/api/proxy/${kind}` as '/api/proxy/routers';
    return (await unwrap(api.GET(path, { params: { query: query as never } }))) as unknown as Item[];
  }, [kind, protocol, search]);
  return (
    <>
      <PageHeader title="Traefik explorer">{version.data && <span class="muted">Traefik {version.data.version}</span>}</PageHeader>
      <ErrorBox error={version.error} title="Traefik API" />
      <ExplorerSummary protocol={protocol} />
      <Tabs<Kind>
        tabs={[
          ['routers', 'Routers'],
          ['services', 'Services'],
          ['middlewares', 'Middlewares'],
        ]}
        current={kind}
        onChange={setKind}
      />
      <div class="toolbar">
        <Field label="Protocol">
          <select value={protocol} onChange={(e) => setProtocol(e.currentTarget.value as Protocol)}>
            <option>http</option>
            <option>tcp</option>
            <option>udp</option>
          </select>
        </Field>
        <Field label="Search">
          <input type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
        </Field>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </div>
      <ErrorBox error={list.error} title={`Traefik ${kind}`} />
      <Loading when={list.loading && !list.data} />
      {list.data && (
        <DataTable
          rows={list.data}
          rowKey={(item) => item.name ?? ''}
          empty="none"
          detail={(item) => open === item.name && <Json value={item} />}
          columns={[
            {
              title: 'Name',
              cell: (item) => (
                <button type="button" class="link-button" aria-expanded={open === item.name} onClick={() => setOpen(open === item.name ? null : (item.name ?? null))}>
                  {item.name}
                </button>
              ),
            },
            {
              title: 'Status',
              cell: (item) => (
                <>
                  <StatusBadge status={item.status} />
                  {(Array.isArray(item.error) ? item.error : item.error ? [item.error] : []).map((e) => (
                    <div class="field-error" key={e}>
                      {e}
                    </div>
                  ))}
                </>
              ),
            },
            { title: 'Provider', cell: (item) => <Badge tone="neutral">{item.provider}</Badge> },
            {
              title: kind === 'routers' ? 'Rule → service' : 'Type',
              cell: (item) =>
                kind === 'routers' ? (
                  <>
                    <code>{item.rule}</code> → {item.service}
                  </>
                ) : (
                  item.type
                ),
            },
          ]}
        />
      )}
    </>
  );
}
