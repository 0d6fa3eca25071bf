/**
 * Create or edit an own resource (`source: local`, API.md §4.24): hosts (and a path prefix) or a
 * raw rule, entry points, a service (an existing one, or server URLs that make `<id>-service`),
 * TLS and priority. Middlewares and the other router options are set on the detail page's tabs.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import type { Resource } from '../api/types';
import { ErrorBox, Field, FieldError, Loading, PageHeader } from '../components/ui';
import { useAsync } from '../lib/use-async';
import { navigate } from '../lib/router';
import { canWrite, useSession } from '../lib/session';
import type { ScreenProps } from '../routes';

interface Draft {
  id: string;
  name: string;
  mode: 'hosts' | 'rule';
  hosts: string;
  pathPrefix: string;
  rule: string;
  entrypoints: string;
  serviceMode: 'servers' | 'existing';
  servers: string;
  serviceId: string;
  tls: boolean;
  certResolver: string;
  priority: string;
}

const BLANK: Draft = {
  id: '',
  name: '',
  mode: 'hosts',
  hosts: '',
  pathPrefix: '',
  rule: '',
  entrypoints: 'websecure',
  serviceMode: 'servers',
  servers: '',
  serviceId: '',
  tls: true,
  certResolver: '',
  priority: '',
};

const lines = (text: string) =>
  text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);

/** The rule the server builds from hosts and a path prefix (plugins/resources/local.ts buildRule). */
function ruleOf(hosts: string[], prefix: string | null): string {
  const part = hosts.map((h) => `Host(\`${h}\`)`).join(' || ');
  return prefix ? `${hosts.length > 1 ? `(${part})` : part} && PathPrefix(\`${prefix}\`)` : part;
}

/** The form's state from a stored local resource. */
function draftOf(r: Resource): Draft {
  const fromHosts = r.hosts.length > 0 && r.rule === ruleOf(r.hosts, r.path_prefix);
  const made = r.service_id === `${r.id}-service`;
  return {
    id: r.id,
    name: r.name,
    mode: fromHosts ? 'hosts' : 'rule',
    hosts: r.hosts.join('\n'),
    pathPrefix: r.path_prefix ?? '',
    rule: r.rule,
    entrypoints: r.entrypoints.join(', '),
    serviceMode: made ? 'servers' : 'existing',
    servers: '',
    serviceId: r.service_id ?? '',
    tls: r.tls !== null,
    certResolver: r.tls?.cert_resolver ?? '',
    priority: r.priority === null ? '' : String(r.priority),
  };
}

/** The POST/PUT body of a draft. */
function bodyOf(d: Draft) {
  return {
    name: d.name,
    ...(d.mode === 'hosts' ? { hosts: lines(d.hosts), ...(d.pathPrefix ? { path_prefix: d.pathPrefix } : {}) } : { rule: d.rule }),
    entrypoints: lines(d.entrypoints),
    ...(d.serviceMode === 'servers' ? { servers: lines(d.servers) } : { service_id: d.serviceId }),
    tls: d.tls ? { cert_resolver: d.certResolver || null } : null,
    priority: d.priority ? Number(d.priority) : null,
  };
}

export default function ResourceEdit({ params }: ScreenProps) {
  const { session } = useSession();
  const id = params.id;
  const isNew = !id;
  const [draft, setDraft] = useState<Draft>(BLANK);
  const [loaded, setLoaded] = useState<Resource | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [error, setError] = useState<unknown>(null);
  const services = useAsync(() => unwrap(api.GET('/api/services', { params: { query: { protocol: 'http' } } })), []);
  const set = (patch: Partial<Draft>) => setDraft({ ...draft, ...patch });

  useEffect(() => {
    if (isNew) return;
    unwrap(api.GET('/api/resources/{id}', { params: { path: { id } }, cache: 'no-store' })).then((r) => {
      setLoaded(r);
      const next = draftOf(r);
      // the servers of the service it made, so a save without changes keeps them
      if (next.serviceMode === 'servers')
        void unwrap(api.GET('/api/services/{id}', { params: { path: { id: next.serviceId } } })).then(
          (s) => setDraft({ ...next, servers: ((s.config.servers as { url?: string }[] | undefined) ?? []).map((x) => x.url ?? '').join('\n') }),
          () => setDraft(next),
        );
      else setDraft(next);
    }, setLoadError);
  }, [id]);

  const save = async () => {
    setError(null);
    try {
      const body = bodyOf(draft);
      const saved = isNew
        ? await unwrap(api.POST('/api/resources', { body: { ...body, ...(draft.id ? { id: draft.id } : {}) } }))
        : await unwrap(api.PUT('/api/resources/{id}', { params: { path: { id } }, body, headers: loaded ? { 'If-Match': `"${loaded.etag}"` } : {} }));
      navigate(`/resources/${encodeURIComponent(saved.id)}`, isNew);
    } catch (err) {
      setError(err);
    }
  };

  if (loadError) return <ErrorBox error={loadError} />;
  if (!isNew && !loaded) return <Loading when />;
  if (loaded && loaded.source !== 'local')
    return <div class="notice">Resource {loaded.id} is discovered from the data source: change it through its tabs.</div>;
  return (
    <>
      <PageHeader title={isNew ? 'New resource' : `Edit ${draft.name}`} />
      <p>
        <a href={isNew ? '/resources' : `/resources/${encodeURIComponent(id)}`}>← {isNew ? 'all resources' : 'back to the resource'}</a>
      </p>
      <p class="muted small">An own router that Stack Manager defines itself (source local), for routes Pangolin does not make.</p>
      <ErrorBox error={error} />
      <form
        id="resource-form"
        class="card"
        onSubmit={(event) => {
          event.preventDefault();
          void save();
        }}
      >
        <fieldset disabled={!canWrite(session)} style="border:0;padding:0;margin:0">
          <div class="form-row">
            <Field label="Name">
              <input name="name" value={draft.name} required onInput={(e) => set({ name: e.currentTarget.value })} />
              <FieldError error={error} pointer="/name" />
            </Field>
            {isNew && (
              <Field label="Id (optional)">
                <input name="id" value={draft.id} onInput={(e) => set({ id: e.currentTarget.value })} />
                <FieldError error={error} pointer="/id" />
              </Field>
            )}
          </div>
          <Field label="Match by">
            <select name="mode" value={draft.mode} onChange={(e) => set({ mode: e.currentTarget.value as Draft['mode'] })}>
              <option value="hosts">host names</option>
              <option value="rule">a Traefik rule</option>
            </select>
          </Field>
          {draft.mode === 'hosts' ? (
            <div class="form-row">
              <Field label="Hosts (one per line)">
                <textarea name="hosts" rows={3} class="code" value={draft.hosts} onInput={(e) => set({ hosts: e.currentTarget.value })} />
                <FieldError error={error} pointer="/hosts" />
              </Field>
              <Field label="Path prefix (optional)">
                <input name="path_prefix" placeholder="/app" value={draft.pathPrefix} onInput={(e) => set({ pathPrefix: e.currentTarget.value })} />
                <FieldError error={error} pointer="/path_prefix" />
              </Field>
            </div>
          ) : (
            <Field label="Rule">
              <input name="rule" class="code" placeholder="Host(`app.example.com`) && PathPrefix(`/api`)" value={draft.rule} onInput={(e) => set({ rule: e.currentTarget.value })} />
              <FieldError error={error} pointer="/rule" />
            </Field>
          )}
          <Field label="Entry points (comma separated)">
            <input name="entrypoints" value={draft.entrypoints} onInput={(e) => set({ entrypoints: e.currentTarget.value })} />
            <FieldError error={error} pointer="/entrypoints" />
          </Field>
          <Field label="Service">
            <select name="service_mode" value={draft.serviceMode} onChange={(e) => set({ serviceMode: e.currentTarget.value as Draft['serviceMode'] })}>
              <option value="servers">server URLs (makes {draft.id || 'its'}-service)</option>
              <option value="existing">an existing service</option>
            </select>
          </Field>
          {draft.serviceMode === 'servers' ? (
            <Field label="Server URLs (one per line)">
              <textarea name="servers" rows={3} class="code" placeholder="http://10.0.0.7:8080" value={draft.servers} onInput={(e) => set({ servers: e.currentTarget.value })} />
              <FieldError error={error} pointer="/servers" />
            </Field>
          ) : (
            <Field label="Existing service">
              <select name="service_id" value={draft.serviceId} onChange={(e) => set({ serviceId: e.currentTarget.value })} required>
                <option value="">Choose…</option>
                {(services.data ?? []).map((s) => (
                  <option key={s.id} value={s.id}>
                    {s.name} ({s.source})
                  </option>
                ))}
              </select>
              <FieldError error={error} pointer="/service_id" />
            </Field>
          )}
          <div class="form-row">
            <Field label="TLS" hint="terminate TLS (Traefik's default certificate unless a resolver is set)">
              <input type="checkbox" name="tls" checked={draft.tls} onChange={(e) => set({ tls: e.currentTarget.checked })} />
            </Field>
            {draft.tls && (
              <Field label="Certificate resolver (optional)">
                <input name="cert_resolver" placeholder="letsencrypt" value={draft.certResolver} onInput={(e) => set({ certResolver: e.currentTarget.value })} />
              </Field>
            )}
            <Field label="Priority (optional)">
              <input name="priority" type="number" min={1} value={draft.priority} onInput={(e) => set({ priority: e.currentTarget.value })} />
              <FieldError error={error} pointer="/priority" />
            </Field>
          </div>
          <div class="actions">
            <button type="submit" class="primary">
              {isNew ? 'Create resource' : 'Save resource'}
            </button>
          </div>
        </fieldset>
      </form>
    </>
  );
}
