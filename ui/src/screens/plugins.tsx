/** Traefik plugins: the static config path, installed plugins (status from Traefik), vendoring, the catalogue, install/remove. */
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, unwrap } from '../api/client';
import { ErrorBox, Field, FieldError, Loading, PageHeader, StatusBadge } from '../components/ui';
import { DataTable } from '../components/data-table';
import { useAsync } from '../lib/use-async';
import { canWrite, useSession } from '../lib/session';
import { useLocation } from '../lib/router';
import { VendorActions, VendoredInfo } from './plugins/vendor';
import { EntryPoints } from './plugins/entrypoints';
import { StaticSettings } from './plugins/static-settings';

export default function Plugins() {
  const { session } = useSession();
  const writable = canWrite(session);
  const configPath = useAsync(() => unwrap(api.GET('/api/plugins/configpath')), []);
  const installed = useAsync(() => unwrap(api.GET('/api/plugins')), []);
  const [q, setQ] = useState('');
  const [showCatalogue, setShowCatalogue] = useState(false);
  const catalogue = useAsync(() => (showCatalogue ? unwrap(api.GET('/api/plugins/catalogue', { params: { query: { ...(q ? { q } : {}), page_size: 50 } } })) : Promise.resolve(null)), [showCatalogue, q]);
  const [pathDraft, setPathDraft] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  // bumped when the compose file or plugins-local dir changes: the entry points list depends on them
  const [filesChanged, setFilesChanged] = useState(0);
  // ?vendor=<key>: the Diagnosis' plugins_disabled finding links here, to the plugin to vendor
  const focus = useLocation().query.get('vendor');
  useEffect(() => {
    if (focus && installed.data) document.querySelector(`tr[data-plugin="${CSS.escape(focus)}"]`)?.scrollIntoView({ block: 'center' });
  }, [focus, installed.data]);
  const act = async (action: () => Promise<unknown>, done: string | ((result: any) => string)) => {
    setError(null);
    setNotice(null);
    try {
      const result = await action();
      setNotice(typeof done === 'string' ? done : done(result));
      installed.reload();
      configPath.reload();
    } catch (err) {
      setError(err);
    }
  };
  const notConfigured = installed.error instanceof ApiError && installed.error.id === 'not_configured';

  return (
    <>
      <PageHeader title="Traefik plugins" />
      {notice && (
        <div class="notice" role="status">
          {notice}
        </div>
      )}
      <ErrorBox error={error} />
      <section class="card">
        <h2>Static configuration</h2>
        <ErrorBox error={configPath.error} />
        {configPath.data && (
          <p>
            <code>{configPath.data.path ?? 'not set'}</code> <span class="muted">({configPath.data.source}{configPath.data.path ? `, ${configPath.data.exists ? 'exists' : 'missing'}, ${configPath.data.writable ? 'writable' : 'read-only'}` : ''})</span>
          </p>
        )}
        {writable && (
          <form
            class="form-row"
            onSubmit={(event) => {
              event.preventDefault();
              // the entry points come from the static config too: reload them with the new path
              void act(() => unwrap(api.PUT('/api/plugins/configpath', { body: { path: pathDraft } })).then((r) => (setFilesChanged((n) => n + 1), r)), 'Static config path saved.');
            }}
          >
            <Field label="Traefik static config file (absolute path)">
              <input name="configpath" value={pathDraft} placeholder="/etc/traefik/traefik.yml" onInput={(e) => setPathDraft(e.currentTarget.value)} required />
              <FieldError error={error} pointer="/path" />
            </Field>
            <div>
              <button type="submit">Set path</button>
            </div>
          </form>
        )}
        <StaticSettings
          writable={writable}
          onSaved={() => {
            setFilesChanged((n) => n + 1);
            installed.reload();
          }}
        />
      </section>
      <h2>Installed</h2>
      <p class="muted small">
        Traefik downloads every remote plugin at each start; when the plugin registry cannot be reached it disables every plugin, and the routers using one answer 404. <strong>Vendor (work offline)</strong> copies a plugin into Traefik's plugins-local directory (<code>plugins_local_dir</code>) so it loads without the network.
      </p>
      {focus && !installed.data?.find((p) => p.key === focus)?.vendored && (
        <p class="notice" data-vendor-focus={focus}>
          Traefik could not load its plugins: vendor <code>{focus}</code> below, then restart Traefik.
        </p>
      )}
      {notConfigured ? <p class="muted">{(installed.error as ApiError).message}</p> : <ErrorBox error={installed.error} />}
      <Loading when={installed.loading && !installed.data} />
      {installed.data && (
        <DataTable
          rows={installed.data}
          rowKey={(p) => p.key}
          rowProps={(p) => ({ 'data-plugin': p.key, 'data-focused': p.key === focus || undefined, style: p.key === focus ? { background: 'var(--warn-bg)' } : undefined })}
          empty="No plugins in the static configuration."
          columns={[
            {
              title: 'Key',
              cell: (p) => (
                <>
                  <code>{p.key}</code>
                  {p.local && ' (local)'}
                </>
              ),
            },
            {
              title: 'Module',
              cell: (p) => (
                <>
                  {p.module_name} {p.version}
                  <VendoredInfo plugin={p} />
                </>
              ),
            },
            {
              title: 'Status',
              cell: (p) => (
                <>
                  <StatusBadge status={p.status} />
                  {p.error && <div class="field-error">{p.error}</div>}
                </>
              ),
            },
            { title: 'Used by', cell: (p) => p.used_by.join(', ') || '–' },
            {
              title: '',
              cell: (p) =>
                writable && (
                  <>
                    <VendorActions plugin={p} act={act} />{' '}
                    <button type="button" class="danger" onClick={() => confirm(`Remove plugin ${p.key}?`) && act(() => unwrap(api.DELETE('/api/plugins/remove', { body: { key: p.key } })), `Removed ${p.key}. Restart Traefik to apply.`)}>
                      Remove
                    </button>
                  </>
                ),
            },
          ]}
        />
      )}
      <EntryPoints reloadKey={filesChanged} writable={writable} opsOpen={session.opsOpen} opsClosed={!session.opsOpen && session.mode !== 'unknown'} />
      <h2>Catalogue</h2>
      {!showCatalogue ? (
        <button type="button" onClick={() => setShowCatalogue(true)}>
          Load the plugin catalogue
        </button>
      ) : (
        <>
          <div class="toolbar">
            <Field label="Search the catalogue">
              <input type="search" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
            </Field>
          </div>
          <ErrorBox error={catalogue.error} title="Catalogue" />
          <Loading when={catalogue.loading} />
          {catalogue.data && (
            <DataTable
              headless
              rows={catalogue.data}
              rowKey={(entry) => entry.id ?? entry.import ?? ''}
              columns={[
                {
                  title: 'Plugin',
                  cell: (entry) => (
                    <>
                      <strong>{entry.displayName}</strong>
                      <div class="muted small">{entry.import}</div>
                      <div class="small">{entry.summary}</div>
                    </>
                  ),
                },
                { title: 'Version', cell: (entry) => entry.latestVersion },
                {
                  title: '',
                  cell: (entry) =>
                    entry.isInstalled ? (
                      'installed'
                    ) : writable ? (
                      <button type="button" onClick={() => act(() => unwrap(api.POST('/api/plugins/install', { body: { module_name: entry.import ?? '', ...(entry.latestVersion ? { version: entry.latestVersion } : {}) } })), `Installed ${entry.displayName}. Restart Traefik to load it.`)}>
                        Install
                      </button>
                    ) : null,
                },
              ]}
            />
          )}
        </>
      )}
    </>
  );
}
