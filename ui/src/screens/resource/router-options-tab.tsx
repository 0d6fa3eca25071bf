/** The seven router options of a resource (API.md §4.4 config sub-objects), each saved with its own PUT. */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, unwrap } from '../../api/client';
import type { Resource } from '../../api/types';
import { ErrorBox, Field, FieldError } from '../../components/ui';

type Key = 'http' | 'tls' | 'tcp' | 'headers' | 'priority' | 'mtls' | 'mtlswhitelist';
interface Props {
  resource: Resource;
  writable: boolean;
  onChange: (updated?: Resource) => void;
}

const list = (text: string) => text.split(',').map((s) => s.trim()).filter(Boolean);
const orNull = (text: string) => (text.trim() === '' ? null : text.trim());

function headerLines(map: Record<string, string>): string {
  return Object.entries(map).map(([name, value]) => `${name}: ${value}`).join('\n');
}
function parseHeaderLines(text: string): Record<string, string> {
  const map: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const at = line.indexOf(':');
    if (at > 0) map[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return map;
}

/** One option's form: Save sends PUT /config/<key>; the server's field messages appear inside it. */
function Section({ title, name, writable, save, children, hint }: { title: string; name: Key; writable: boolean; save: () => Promise<Resource>; children: ComponentChildren; hint: string }) {
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  return (
    <form
      class="card"
      data-option={name}
      onSubmit={async (event) => {
        event.preventDefault();
        setError(null);
        setSaved(false);
        try {
          await save();
          setSaved(true);
        } catch (err) {
          setError(err);
        }
      }}
    >
      <h3>{title}</h3>
      <p class="muted small">{hint}</p>
      <fieldset disabled={!writable} style="border:0;padding:0;margin:0">
        {children}
      </fieldset>
      <ErrorBox error={error} />
      <FieldError error={error} pointer="" />
      {saved && <div class="success">Saved.</div>}
      {writable && <button type="submit">Save {title.toLowerCase()}</button>}
    </form>
  );
}

export function RouterOptionsTab({ resource, writable, onChange }: Props) {
  const id = resource.id;
  const c = resource.config;
  const [http, setHttp] = useState((c.http.entrypoints ?? []).join(', '));
  const [tls, setTls] = useState({ cert_resolver: c.tls.cert_resolver ?? '', options: c.tls.options ?? '', domains: (c.tls.domains ?? []).map((d) => [d.main, ...(d.sans ?? [])].join(' ')).join('\n') });
  const [tcp, setTcp] = useState({ enabled: c.tcp.enabled ?? false, entrypoints: (c.tcp.entrypoints ?? []).join(', '), sni_rule: c.tcp.sni_rule ?? '', service_id: c.tcp.service_id ?? '' });
  const [headers, setHeaders] = useState({ request: headerLines(c.headers.request ?? {}), response: headerLines(c.headers.response ?? {}) });
  const [priority, setPriority] = useState(c.priority.priority == null ? '' : String(c.priority.priority));
  const [mtls, setMtls] = useState(c.mtls.enabled ?? false);
  const [whitelist, setWhitelist] = useState(JSON.stringify(c.mtlswhitelist, null, 2));
  const path = { params: { path: { id } } };
  const done = async <T extends Resource>(call: Promise<T>) => {
    const updated = await call;
    onChange(updated);
    return updated;
  };

  return (
    <section id="router-options">
      <Section title="Entry points" name="http" writable={writable} hint="Replaces the router's entryPoints; empty = inherit the upstream ones." save={() => done(unwrap(api.PUT('/api/resources/{id}/config/http', { ...path, body: { entrypoints: list(http) } })))}>
        <Field label="Entry points (comma-separated)">
          <input name="entrypoints" value={http} onInput={(e) => setHttp(e.currentTarget.value)} placeholder="websecure" />
        </Field>
      </Section>
      <Section
        title="TLS"
        name="tls"
        writable={writable}
        hint="Empty fields inherit the upstream TLS settings."
        save={() =>
          done(
            unwrap(
              api.PUT('/api/resources/{id}/config/tls', {
                ...path,
                body: {
                  cert_resolver: orNull(tls.cert_resolver),
                  options: orNull(tls.options),
                  domains: tls.domains.trim() ? tls.domains.trim().split('\n').map((line) => { const [main, ...sans] = line.trim().split(/\s+/); return { main, sans }; }) : null,
                },
              }),
            ),
          )
        }
      >
        <div class="form-row">
          <Field label="Cert resolver">
            <input value={tls.cert_resolver} onInput={(e) => setTls({ ...tls, cert_resolver: e.currentTarget.value })} />
          </Field>
          <Field label="TLS options">
            <input value={tls.options} onInput={(e) => setTls({ ...tls, options: e.currentTarget.value })} />
          </Field>
        </div>
        <Field label="Domains (one per line: main then SANs)">
          <textarea rows={3} value={tls.domains} onInput={(e) => setTls({ ...tls, domains: e.currentTarget.value })} />
        </Field>
      </Section>
      <Section
        title="TCP router"
        name="tcp"
        writable={writable}
        hint="Emits a TCP router <id>_tcp beside the HTTP one."
        save={() => done(unwrap(api.PUT('/api/resources/{id}/config/tcp', { ...path, body: { enabled: tcp.enabled, entrypoints: list(tcp.entrypoints), sni_rule: orNull(tcp.sni_rule), service_id: orNull(tcp.service_id) } })))}
      >
        <label class="check">
          <input type="checkbox" checked={tcp.enabled} onChange={(e) => setTcp({ ...tcp, enabled: e.currentTarget.checked })} /> Enabled
        </label>
        <div class="form-row">
          <Field label="Entry points">
            <input value={tcp.entrypoints} onInput={(e) => setTcp({ ...tcp, entrypoints: e.currentTarget.value })} />
          </Field>
          <Field label="SNI rule">
            <input value={tcp.sni_rule} placeholder="HostSNI(`host`)" onInput={(e) => setTcp({ ...tcp, sni_rule: e.currentTarget.value })} />
          </Field>
          <Field label="TCP service id">
            <input value={tcp.service_id} onInput={(e) => setTcp({ ...tcp, service_id: e.currentTarget.value })} />
          </Field>
        </div>
      </Section>
      <Section title="Headers" name="headers" writable={writable} hint="One 'Name: value' per line; an empty value removes that header." save={() => done(unwrap(api.PUT('/api/resources/{id}/config/headers', { ...path, body: { request: parseHeaderLines(headers.request), response: parseHeaderLines(headers.response) } })))}>
        <div class="form-row">
          <Field label="Request headers">
            <textarea rows={3} class="code" value={headers.request} onInput={(e) => setHeaders({ ...headers, request: e.currentTarget.value })} />
          </Field>
          <Field label="Response headers">
            <textarea rows={3} class="code" value={headers.response} onInput={(e) => setHeaders({ ...headers, response: e.currentTarget.value })} />
          </Field>
        </div>
      </Section>
      <Section title="Priority" name="priority" writable={writable} hint="Router priority; empty = inherit the upstream priority." save={() => done(unwrap(api.PUT('/api/resources/{id}/config/priority', { ...path, body: { priority: priority.trim() === '' ? null : Number(priority) } })))}>
        <Field label="Priority">
          <input type="number" name="router_priority" min={1} value={priority} onInput={(e) => setPriority(e.currentTarget.value)} />
        </Field>
      </Section>
      <Section title="mTLS" name="mtls" writable={writable} hint="Require a client certificate from our CA (mTLS must be enabled globally)." save={() => done(unwrap(api.PUT('/api/resources/{id}/config/mtls', { ...path, body: { enabled: mtls } })))}>
        <label class="check">
          <input type="checkbox" checked={mtls} onChange={(e) => setMtls(e.currentTarget.checked)} /> Enabled
        </label>
      </Section>
      <Section
        title="mTLS whitelist"
        name="mtlswhitelist"
        writable={writable}
        hint="Per-resource overrides of the mtlswhitelist plugin settings (JSON; null fields inherit the global ones)."
        save={async () => {
          let body: unknown;
          try {
            body = JSON.parse(whitelist);
          } catch (err) {
            throw new Error(`not valid JSON: ${(err as Error).message}`);
          }
          return done(unwrap(api.PUT('/api/resources/{id}/config/mtlswhitelist', { ...path, body: body as never })));
        }}
      >
        <textarea rows={8} class="code" value={whitelist} onInput={(e) => setWhitelist(e.currentTarget.value)} />
      </Section>
    </section>
  );
}
