/** Traefik explorer: routers, services and middlewares as Traefik reports them, with their errors and partial answers. */
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { Badge, ErrorBox, Field, Json, Loading, PageHeader, StatusBadge, Tabs } from '../components/ui';
import { useAsync } from '../lib/use-async';

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
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>Status</th>
                <th>Provider</th>
                <th>{kind === 'routers' ? 'Rule → service' : 'Type'}</th>
              </tr>
            </thead>
            <tbody>
              {list.data.length === 0 && (
                <tr>
                  <td colSpan={4} class="muted">
                    none
                  </td>
                </tr>
              )}
              {list.data.map((item) => {
                const errors = Array.isArray(item.error) ? item.error : item.error ? [item.error] : [];
                return (
                  <Fragment key={item.name}>
                    <tr>
                      <td>
                        <button type="button" class="link-button" aria-expanded={open === item.name} onClick={() => setOpen(open === item.name ? null : (item.name ?? null))}>
                          {item.name}
                        </button>
                      </td>
                      <td>
                        <StatusBadge status={item.status} />
                        {errors.map((e) => (
                          <div class="field-error" key={e}>
                            {e}
                          </div>
                        ))}
                      </td>
                      <td>
                        <Badge tone="neutral">{item.provider}</Badge>
                      </td>
                      <td>
                        {kind === 'routers' ? (
                          <>
                            <code>{item.rule}</code> → {item.service}
                          </>
                        ) : (
                          item.type
                        )}
                      </td>
                    </tr>
                    {open === item.name && (
                      <tr>
                        <td colSpan={4}>
                          <Json value={item} />
                        </td>
                      </tr>
                    )}
                  </Fragment>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
