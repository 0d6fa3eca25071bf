/** API tokens (admin): create with role and expiry (the token is shown once), list, revoke. */
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import type { CreatedToken } from '../api/types';
import { ErrorBox, Field, FieldError, Loading, PageHeader, when } from '../components/ui';
import { DataTable } from '../components/data-table';
import { useAsync } from '../lib/use-async';

type Role = 'viewer' | 'operator' | 'admin';

export default function Tokens() {
  const list = useAsync(() => unwrap(api.GET('/api/auth/tokens')), []);
  const [draft, setDraft] = useState({ name: '', role: 'viewer' as Role, expires_in_days: '' });
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<CreatedToken | null>(null);
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
      <PageHeader title="API tokens" />
      <ErrorBox error={error} />
      {created && (
        <div class="success" role="status" id="created-token">
          <p>
            Token <strong>{created.name}</strong> ({created.role}) created. Copy it now: it is not shown again.
          </p>
          <div class="secret" data-token>
            {created.token}
          </div>
          <button type="button" onClick={() => navigator.clipboard?.writeText(created.token)}>
            Copy
          </button>{' '}
          <button type="button" onClick={() => setCreated(null)}>
            Done
          </button>
        </div>
      )}
      <form
        class="card"
        id="token-create"
        onSubmit={(event) => {
          event.preventDefault();
          void act(async () => {
            setCreated(await unwrap(api.POST('/api/auth/tokens', { body: { name: draft.name, role: draft.role, ...(draft.expires_in_days ? { expires_in_days: Number(draft.expires_in_days) } : {}) } })));
            setDraft({ ...draft, name: '' });
          });
        }}
      >
        <div class="form-row">
          <Field label="Name">
            <input name="token_name" value={draft.name} required onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })} />
            <FieldError error={error} pointer="/name" />
          </Field>
          <Field label="Role">
            <select name="role" value={draft.role} onChange={(e) => setDraft({ ...draft, role: e.currentTarget.value as Role })}>
              <option value="viewer">viewer (read only)</option>
              <option value="operator">operator</option>
              <option value="admin">admin</option>
            </select>
          </Field>
          <Field label="Expires in (days, optional)">
            <input type="number" min={1} max={3650} value={draft.expires_in_days} onInput={(e) => setDraft({ ...draft, expires_in_days: e.currentTarget.value })} />
            <FieldError error={error} pointer="/expires_in_days" />
          </Field>
        </div>
        <button type="submit" class="primary">
          Create token
        </button>
      </form>
      <ErrorBox error={list.error} />
      <Loading when={list.loading && !list.data} />
      {list.data && (
        <DataTable
          rows={list.data}
          rowKey={(t) => t.name}
          rowProps={(t) => ({ 'data-token-name': t.name })}
          columns={[
            { title: 'Name', cell: (t) => t.name },
            { title: 'Role', cell: (t) => t.role },
            { title: 'Created', cell: (t) => when(t.created_at) },
            { title: 'Expires', cell: (t) => when(t.expires_at) },
            { title: 'Last used', cell: (t) => when(t.last_used_at) },
            {
              title: '',
              cell: (t) => (
                <button type="button" class="danger" onClick={() => confirm(`Revoke token ${t.name}?`) && act(() => unwrap(api.DELETE('/api/auth/tokens/{name}', { params: { path: { name: t.name } } })))}>
                  Revoke
                </button>
              ),
            },
          ]}
        />
      )}
    </>
  );
}
