/** Data sources: edit, test (latency, routers, version) with unsaved values, switch the active one, add, delete. */
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import type { DataSource, DataSourceTest } from '../api/types';
import { Badge, ErrorBox, Field, FieldError, Loading, PageHeader, StatusBadge, when } from '../components/ui';
import { HistoryLink } from '../components/history-link';
import { useAsync } from '../lib/use-async';
import { objectsOf, useLiveReload } from '../lib/events';
import { canWrite, useSession } from '../lib/session';

interface Draft {
  name: string;
  type: 'pangolin' | 'traefik';
  url: string;
  skip_tls_verify: boolean;
  poll_interval_s: number;
  timeout_ms: number;
  username: string;
  password: string;
}
const MASK = '••••••••';

function toDraft(source: DataSource): Draft {
  return {
    name: source.name,
    type: source.type,
    url: source.url,
    skip_tls_verify: source.skip_tls_verify,
    poll_interval_s: source.poll_interval_s,
    timeout_ms: source.timeout_ms,
    username: source.basic_auth?.username ?? '',
    password: source.basic_auth?.password_set ? MASK : '',
  };
}

function body(draft: Draft) {
  return {
    type: draft.type,
    url: draft.url,
    skip_tls_verify: draft.skip_tls_verify,
    poll_interval_s: draft.poll_interval_s,
    timeout_ms: draft.timeout_ms,
    basic_auth: draft.username ? { username: draft.username, password: draft.password } : null,
  };
}

function SourceForm({ initial, isNew, writable, onDone }: { initial: Draft; isNew: boolean; writable: boolean; onDone: () => void }) {
  const [draft, setDraft] = useState(initial);
  const [error, setError] = useState<unknown>(null);
  const [test, setTest] = useState<DataSourceTest | null>(null);
  const [testing, setTesting] = useState(false);
  const set = (patch: Partial<Draft>) => setDraft({ ...draft, ...patch });
  const runTest = async () => {
    setTesting(true);
    setError(null);
    try {
      setTest(await unwrap(api.POST('/api/datasource/{name}/test', { params: { path: { name: draft.name || 'new' } }, body: body(draft) as never })));
    } catch (err) {
      setError(err);
    } finally {
      setTesting(false);
    }
  };
  return (
    <form
      class="card"
      data-source={initial.name || 'new'}
      onSubmit={async (event) => {
        event.preventDefault();
        setError(null);
        try {
          await unwrap(api.PUT('/api/datasource/{name}', { params: { path: { name: draft.name } }, body: body(draft) as never }));
          onDone();
        } catch (err) {
          setError(err);
        }
      }}
    >
      <fieldset disabled={!writable} style="border:0;padding:0;margin:0">
        <div class="form-row">
          {isNew && (
            <Field label="Name">
              <input name="name" value={draft.name} required onInput={(e) => set({ name: e.currentTarget.value })} />
              <FieldError error={error} pointer="/params/name" />
            </Field>
          )}
          <Field label="Type">
            <select value={draft.type} onChange={(e) => set({ type: e.currentTarget.value as Draft['type'] })}>
              <option value="pangolin">pangolin (HTTP provider endpoint)</option>
              <option value="traefik">traefik (Traefik API)</option>
            </select>
          </Field>
          <Field label="URL">
            <input name="url" value={draft.url} required onInput={(e) => set({ url: e.currentTarget.value })} />
            <FieldError error={error} pointer="/url" />
          </Field>
        </div>
        <div class="form-row">
          <Field label="Poll interval (s)">
            <input type="number" min={1} max={3600} value={draft.poll_interval_s} onInput={(e) => set({ poll_interval_s: Number(e.currentTarget.value) })} />
            <FieldError error={error} pointer="/poll_interval_s" />
          </Field>
          <Field label="Timeout (ms)">
            <input type="number" min={100} max={60000} value={draft.timeout_ms} onInput={(e) => set({ timeout_ms: Number(e.currentTarget.value) })} />
            <FieldError error={error} pointer="/timeout_ms" />
          </Field>
          <Field label="Basic auth user">
            <input value={draft.username} autoComplete="off" onInput={(e) => set({ username: e.currentTarget.value })} />
          </Field>
          <Field label="Password">
            <input type="password" value={draft.password} autoComplete="new-password" onInput={(e) => set({ password: e.currentTarget.value })} />
            <FieldError error={error} pointer="/basic_auth" />
          </Field>
        </div>
        <label class="check">
          <input type="checkbox" checked={draft.skip_tls_verify} onChange={(e) => set({ skip_tls_verify: e.currentTarget.checked })} /> Skip TLS verification
        </label>
      </fieldset>
      <ErrorBox error={error} />
      {test && (
        <div class={test.ok ? 'success' : 'error-box'} data-test-result={test.ok ? 'ok' : 'fail'}>
          {test.ok ? 'Reachable' : 'Failed'} in {test.latency_ms} ms{test.routers != null && `, ${test.routers} routers`}
          {test.version && `, Traefik ${test.version}`}
          {test.error && `: ${test.error}`}
        </div>
      )}
      <div class="actions">
        <button type="button" onClick={runTest} disabled={testing}>
          {testing ? 'Testing…' : 'Test'}
        </button>
        {writable && (
          <button type="submit" class="primary">
            {isNew ? 'Add source' : 'Save'}
          </button>
        )}
      </div>
    </form>
  );
}

export default function DataSources() {
  const { session } = useSession();
  const writable = canWrite(session);
  const list = useAsync(() => unwrap(api.GET('/api/datasource')), []);
  const [error, setError] = useState<unknown>(null);
  const [adding, setAdding] = useState(false);
  useLiveReload((e) => objectsOf('datasources')(e) || e.type === 'upstream', list.reload);
  const act = async (action: () => Promise<unknown>) => {
    setError(null);
    try {
      await action();
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <>
      <PageHeader title="Data sources">
        <HistoryLink path="datasources.yaml" />
        {writable && (
          <button type="button" onClick={() => setAdding(!adding)}>
            {adding ? 'Cancel' : 'Add a source'}
          </button>
        )}
      </PageHeader>
      <ErrorBox error={error} />
      <ErrorBox error={list.error} />
      {adding && (
        <SourceForm
          isNew
          writable={writable}
          initial={{ name: '', type: 'traefik', url: 'http://traefik:8080', skip_tls_verify: false, poll_interval_s: 5, timeout_ms: 5000, username: '', password: '' }}
          onDone={() => {
            setAdding(false);
            list.reload();
          }}
        />
      )}
      <Loading when={list.loading && !list.data} />
      {list.data && !list.data.some((source) => source.active) && (
        <div class="notice" data-mode="none">
          No data source is active: nothing is polled, and Traefik gets Stack Manager's own objects only (data source mode none,
          for a stack without Pangolin; own resources are made on the Resources screen). Make a source active to discover its routers again.
        </div>
      )}
      {writable && list.data?.some((source) => source.active) && (
        <p class="actions">
          <button
            type="button"
            onClick={() =>
              confirm("Use no data source? Traefik then gets only Stack Manager's own middlewares, services and resources: the upstream's routers disappear from it.") &&
              act(() => unwrap(api.PUT('/api/datasource/active', { body: { name: 'none' } })))
            }
          >
            Use no data source (own objects only)
          </button>
        </p>
      )}
      {list.data?.map((source) => (
        <section key={source.name + source.etag}>
          <h2>
            {source.name} {source.active ? <Badge tone="ok">active</Badge> : null}
          </h2>
          <p class="muted small">
            last sync {when(source.last_sync?.at)} {source.last_sync && <StatusBadge status={source.last_sync.ok ? 'ok' : 'fail'} />}
            {source.last_sync?.routers != null && ` · ${source.last_sync.routers} routers`}
            {source.last_sync?.error && <span class="field-error"> {source.last_sync.error}</span>}
          </p>
          <div class="actions">
            {writable && !source.active && (
              <>
                <button type="button" onClick={() => act(() => unwrap(api.PUT('/api/datasource/active', { body: { name: source.name } })))}>
                  Make active
                </button>
                <button type="button" class="danger" onClick={() => confirm(`Delete data source ${source.name}?`) && act(() => unwrap(api.DELETE('/api/datasource/{name}', { params: { path: { name: source.name } } })))}>
                  Delete
                </button>
              </>
            )}
          </div>
          <SourceForm initial={toDraft(source)} isNew={false} writable={writable} onDone={list.reload} />
        </section>
      ))}
    </>
  );
}
