/** mTLS: the CA (create, enable/disable), client certificates (create with a PKCS#12 password, download .p12, revoke, delete). */
import { useState } from 'preact/hooks';
import { api, saveBlob, unwrap } from '../api/client';
import { ErrorBox, Field, FieldError, Loading, PageHeader, StatusBadge, when } from '../components/ui';
import { DataTable } from '../components/data-table';
import { HistoryLink } from '../components/history-link';
import { useAsync } from '../lib/use-async';
import { objectsOf, useLiveReload } from '../lib/events';
import { canWrite, useSession } from '../lib/session';

export default function Mtls() {
  const { session } = useSession();
  const writable = canWrite(session);
  const config = useAsync(() => unwrap(api.GET('/api/mtls/config')), []);
  const clients = useAsync(() => unwrap(api.GET('/api/mtls/clients')), []);
  // client certificates are only checked by Traefik when its mtlswhitelist plugin is installed
  const plugin = useAsync(() => unwrap(api.GET('/api/mtls/plugin/check')), []);
  const [error, setError] = useState<unknown>(null);
  const [ca, setCa] = useState({ common_name: 'Stack Manager CA', organization: '', validity_days: 1825, key_size: 2048 as 2048 | 3072 | 4096 });
  const [client, setClient] = useState({ name: '', p12_password: '', validity_days: 730, key_size: 2048 as 2048 | 3072 | 4096, legacy_p12: false });
  const [busy, setBusy] = useState(false);
  useLiveReload(objectsOf('mtls', 'mtls_clients', 'mtls-clients'), () => {
    config.reload();
    clients.reload();
  });
  const act = async (action: () => Promise<unknown>) => {
    setError(null);
    setBusy(true);
    try {
      await action();
      config.reload();
      clients.reload();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const c = config.data;
  return (
    <>
      <PageHeader title="mTLS">
        <HistoryLink path="mtls" />
        {c?.has_ca && writable && (
          <button type="button" onClick={() => act(() => unwrap(c.enabled ? api.PUT('/api/mtls/disable') : api.PUT('/api/mtls/enable')))}>
            {c.enabled ? 'Disable mTLS' : 'Enable mTLS'}
          </button>
        )}
      </PageHeader>
      <ErrorBox error={error} />
      <ErrorBox error={config.error} />
      <ErrorBox error={plugin.error} title="Traefik plugin" />
      {plugin.data && (
        <p class="card small" id="mtls-plugin" data-installed={plugin.data.installed}>
          Traefik plugin <code>{plugin.data.plugin_name}</code>:{' '}
          {plugin.data.installed ? (
            <>
              <StatusBadge status="installed" /> {plugin.data.module_name} {plugin.data.version}
            </>
          ) : (
            <>
              <StatusBadge status="missing" /> not in {plugin.data.static_config_path ? <code>{plugin.data.static_config_path}</code> : 'the static configuration (no path set)'}; install it on the <a href="/plugins">Traefik plugins</a> screen, then restart Traefik.
            </>
          )}
        </p>
      )}
      <Loading when={config.loading && !c} />
      {c && (
        <section class="card" id="mtls-ca">
          <h2>Certificate authority</h2>
          {c.has_ca ? (
            <dl class="kv">
              <dt>State</dt>
              <dd>
                <StatusBadge status={c.enabled ? 'enabled' : 'disabled'} />
              </dd>
              <dt>Subject</dt>
              <dd>{c.ca_subject}</dd>
              <dt>Valid</dt>
              <dd>
                {when(c.ca_not_before)} – {when(c.ca_expiry)}
              </dd>
              <dt>SHA-256</dt>
              <dd>
                <code class="small">{c.ca_fingerprint_sha256}</code>
              </dd>
              <dt>Clients</dt>
              <dd>
                {c.client_count} ({c.revoked_count} revoked) · CRL next update {when(c.crl_next_update)} · <button type="button" class="link-button" onClick={() => act(async () => saveBlob(await unwrap(api.GET('/api/mtls/crl', { parseAs: 'blob' })), 'crl.pem'))}>
                  download CRL
                </button>
              </dd>
            </dl>
          ) : (
            writable && (
              <form
                onSubmit={(event) => {
                  event.preventDefault();
                  void act(() => unwrap(api.POST('/api/mtls/ca', { body: ca })));
                }}
              >
                <p class="muted">No CA yet. Create one to issue client certificates.</p>
                <div class="form-row">
                  <Field label="Common name">
                    <input name="common_name" value={ca.common_name} required onInput={(e) => setCa({ ...ca, common_name: e.currentTarget.value })} />
                    <FieldError error={error} pointer="/common_name" />
                  </Field>
                  <Field label="Organization">
                    <input value={ca.organization} onInput={(e) => setCa({ ...ca, organization: e.currentTarget.value })} />
                  </Field>
                  <Field label="Validity (days)">
                    <input type="number" value={ca.validity_days} onInput={(e) => setCa({ ...ca, validity_days: Number(e.currentTarget.value) })} />
                    <FieldError error={error} pointer="/validity_days" />
                  </Field>
                  <Field label="Key size">
                    <select value={ca.key_size} onChange={(e) => setCa({ ...ca, key_size: Number(e.currentTarget.value) as 2048 | 3072 | 4096 })}>
                      <option value={2048}>2048</option>
                      <option value={3072}>3072</option>
                      <option value={4096}>4096</option>
                    </select>
                  </Field>
                </div>
                <button type="submit" class="primary" disabled={busy}>
                  {busy ? 'Creating…' : 'Create CA'}
                </button>
              </form>
            )
          )}
        </section>
      )}
      <h2>Client certificates</h2>
      <ErrorBox error={clients.error} />
      {clients.data && clients.data.length > 0 && (
        <DataTable
          rows={clients.data}
          rowKey={(cl) => cl.id}
          rowProps={(cl) => ({ 'data-client': cl.id })}
          columns={[
            {
              title: 'Client',
              cell: (cl) => (
                <>
                  {cl.name}
                  <div class="muted small">serial {cl.serial}</div>
                </>
              ),
            },
            { title: 'Expires', cell: (cl) => when(cl.expiry) },
            { title: 'State', cell: (cl) => <StatusBadge status={cl.revoked ? 'revoked' : 'active'} /> },
            {
              title: '',
              class: 'actions',
              cell: (cl) => (
                <>
                  <HistoryLink path={`mtls/clients/${cl.id}`} />
                  {!cl.revoked && (
                    <button type="button" onClick={() => act(async () => saveBlob(await unwrap(api.GET('/api/mtls/clients/{id}/download', { params: { path: { id: cl.id } }, parseAs: 'blob' })), `${cl.id}.p12`))}>
                      Download .p12
                    </button>
                  )}
                  {writable && !cl.revoked && (
                    <button type="button" class="danger" onClick={() => confirm(`Revoke ${cl.name}? It stops working at once.`) && act(() => unwrap(api.PUT('/api/mtls/clients/{id}/revoke', { params: { path: { id: cl.id } } })))}>
                      Revoke
                    </button>
                  )}
                  {writable && (
                    <button type="button" onClick={() => confirm(`Delete ${cl.name}?`) && act(() => unwrap(api.DELETE('/api/mtls/clients/{id}', { params: { path: { id: cl.id } } })))}>
                      Delete
                    </button>
                  )}
                </>
              ),
            },
          ]}
        />
      )}
      {c?.has_ca && writable && (
        <form
          class="card"
          id="mtls-new-client"
          onSubmit={(event) => {
            event.preventDefault();
            void act(async () => {
              await unwrap(api.POST('/api/mtls/clients', { body: client }));
              setClient({ ...client, name: '', p12_password: '' });
            });
          }}
        >
          <h3>New client certificate</h3>
          <div class="form-row">
            <Field label="Name">
              <input name="client_name" value={client.name} required onInput={(e) => setClient({ ...client, name: e.currentTarget.value })} />
              <FieldError error={error} pointer="/name" />
            </Field>
            <Field label="PKCS#12 password (8+ chars, never stored)">
              <input type="password" name="p12_password" autoComplete="new-password" minLength={8} value={client.p12_password} required onInput={(e) => setClient({ ...client, p12_password: e.currentTarget.value })} />
              <FieldError error={error} pointer="/p12_password" />
            </Field>
            <Field label="Validity (days)">
              <input type="number" value={client.validity_days} onInput={(e) => setClient({ ...client, validity_days: Number(e.currentTarget.value) })} />
            </Field>
          </div>
          <label class="check">
            <input type="checkbox" checked={client.legacy_p12} onChange={(e) => setClient({ ...client, legacy_p12: e.currentTarget.checked })} /> Legacy PKCS#12 (3DES, for older Apple/Windows)
          </label>
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create client'}
          </button>
        </form>
      )}
    </>
  );
}
