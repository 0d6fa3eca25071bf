/** Create (optionally from a template) or edit a service; discovered services are shown read-only. */
import { useEffect, useState } from 'preact/hooks';
import { serviceTemplates } from 'virtual:templates';
import { api, unwrap } from '../api/client';
import type { Service } from '../api/types';
import { ErrorBox, Field, FieldError, Loading, PageHeader, when } from '../components/ui';
import { navigate } from '../lib/router';
import { canWrite, useSession } from '../lib/session';
import type { ScreenProps } from '../routes';
import { ConfigEditor } from './objects/config-editor';

type Protocol = 'http' | 'tcp' | 'udp';
type Kind = 'loadBalancer' | 'weighted' | 'mirroring' | 'failover';
interface Draft {
  id: string;
  name: string;
  type: Kind;
  protocol: Protocol;
  description: string;
  config: Record<string, unknown>;
}
const BLANK: Draft = { id: '', name: '', type: 'loadBalancer', protocol: 'http', description: '', config: { servers: [{ url: 'http://app:8080' }] } };

/** loadBalancer servers as lines: URLs for HTTP, host:port for TCP/UDP. */
function ServersForm({ draft, onChange, error }: { draft: Draft; onChange: (config: Record<string, unknown>) => void; error: unknown }) {
  const key = draft.protocol === 'http' ? 'url' : 'address';
  const servers = (draft.config.servers as Record<string, string>[] | undefined) ?? [];
  return (
    <Field label={draft.protocol === 'http' ? 'Server URLs (one per line)' : 'Server addresses host:port (one per line)'}>
      <textarea
        name="servers"
        rows={4}
        class="code"
        value={servers.map((s) => s[key] ?? '').join('\n')}
        onInput={(e) => onChange({ ...draft.config, servers: e.currentTarget.value.split('\n').map((s) => s.trim()).filter(Boolean).map((value) => ({ [key]: value })) })}
      />
      <FieldError error={error} pointer="/config/servers" />
    </Field>
  );
}

export default function ServiceEdit({ params }: ScreenProps) {
  const { session } = useSession();
  const id = params.id;
  const isNew = !id;
  const [draft, setDraft] = useState<Draft>(BLANK);
  const [loaded, setLoaded] = useState<Service | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [error, setError] = useState<unknown>(null);
  const [parseError, setParseError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const writable = canWrite(session) && loaded?.source !== 'discovered';

  useEffect(() => {
    if (isNew) return;
    unwrap(api.GET('/api/services/{id}', { params: { path: { id } } })).then((s) => {
      setLoaded(s);
      setDraft({ id: s.id, name: s.name, type: s.type as Kind, protocol: s.protocol as Protocol, description: s.description ?? '', config: s.config as Record<string, unknown> });
    }, setLoadError);
  }, [id]);

  const save = async () => {
    setError(null);
    setSaved(false);
    const body = { name: draft.name, type: draft.type, protocol: draft.protocol, description: draft.description, config: draft.config as never };
    try {
      if (isNew) {
        const created = await unwrap(api.POST('/api/services', { body: { ...body, ...(draft.id ? { id: draft.id } : {}) } }));
        navigate(`/services/${encodeURIComponent(created.id)}`, true);
      } else {
        setLoaded(await unwrap(api.PUT('/api/services/{id}', { params: { path: { id } }, body, headers: loaded ? { 'If-Match': `"${loaded.etag}"` } : {} })));
        setSaved(true);
      }
    } catch (err) {
      setError(err);
    }
  };

  if (loadError) return <ErrorBox error={loadError} />;
  if (!isNew && !loaded) return <Loading when />;
  return (
    <>
      <PageHeader title={isNew ? 'New service' : draft.name}>
        {!isNew && (
          <a class="button" href={`/history?path=services/${id}`} data-history-link>
            History
          </a>
        )}
        {!isNew && writable && (
          <button
            type="button"
            class="danger"
            onClick={async () => {
              if (!confirm(`Delete service ${id}?`)) return;
              try {
                await unwrap(api.DELETE('/api/services/{id}', { params: { path: { id } } }));
                navigate('/services');
              } catch (err) {
                setError(err);
              }
            }}
          >
            Delete
          </button>
        )}
      </PageHeader>
      <p>
        <a href="/services">← all services</a>
      </p>
      {loaded && (
        <p class="muted small">
          {loaded.source} · updated {when(loaded.updated_at)} {loaded.upstream_name && <>· upstream <code>{loaded.upstream_name}</code></>}
        </p>
      )}
      {loaded?.source === 'discovered' && <div class="notice">Discovered from the upstream: read-only here.</div>}
      {isNew && (
        <div class="card">
          <Field label="Start from a template" hint="Shipped in config/templates/services.yaml">
            <select
              name="template"
              onChange={(e) => {
                const t = serviceTemplates.find((x) => x.id === e.currentTarget.value);
                if (t) setDraft({ id: '', name: `${t.name} copy`, type: t.type as Kind, protocol: (t.protocol ?? 'http') as Protocol, description: t.description ?? '', config: structuredClone(t.config) });
              }}
            >
              <option value="">Blank</option>
              {serviceTemplates.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name} ({t.protocol ?? 'http'}/{t.type})
                </option>
              ))}
            </select>
          </Field>
        </div>
      )}
      <form
        class="card"
        onSubmit={(event) => {
          event.preventDefault();
          void save();
        }}
      >
        <fieldset disabled={!writable} style="border:0;padding:0;margin:0">
          <div class="form-row">
            <Field label="Name">
              <input name="name" value={draft.name} required onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })} />
              <FieldError error={error} pointer="/name" />
            </Field>
            {isNew && (
              <Field label="Id (optional)">
                <input name="id" value={draft.id} onInput={(e) => setDraft({ ...draft, id: e.currentTarget.value })} />
                <FieldError error={error} pointer="/id" />
              </Field>
            )}
            <Field label="Protocol">
              <select value={draft.protocol} onChange={(e) => setDraft({ ...draft, protocol: e.currentTarget.value as Protocol })}>
                <option>http</option>
                <option>tcp</option>
                <option>udp</option>
              </select>
            </Field>
            <Field label="Type">
              <select value={draft.type} onChange={(e) => setDraft({ ...draft, type: e.currentTarget.value as Kind, config: {} })}>
                <option>loadBalancer</option>
                <option>weighted</option>
                <option>mirroring</option>
                <option>failover</option>
              </select>
              <FieldError error={error} pointer="/type" />
            </Field>
          </div>
          <Field label="Description">
            <input value={draft.description} onInput={(e) => setDraft({ ...draft, description: e.currentTarget.value })} />
          </Field>
          <h3>Configuration</h3>
          <ConfigEditor
            config={draft.config}
            onConfig={(config) => setDraft((d) => ({ ...d, config }))}
            error={error}
            formAvailable={draft.type === 'loadBalancer'}
            onParseError={setParseError}
            renderForm={() => <ServersForm draft={draft} error={error} onChange={(config) => setDraft({ ...draft, config })} />}
          />
          <FieldError error={error} pointer="/config" />
        </fieldset>
        {parseError && <div class="field-error">{parseError}</div>}
        <ErrorBox error={error} />
        {saved && <div class="success">Saved.</div>}
        {writable && (
          <button type="submit" class="primary" disabled={!!parseError}>
            {isNew ? 'Create service' : 'Save'}
          </button>
        )}
      </form>
    </>
  );
}
