/** Security screen: our CrowdSec allowlist (API.md §4.23) — add an address or range with a TTL, remove it. */
import { useState } from 'preact/hooks';
import { api, toApiError, unwrap } from '../../api/client';
import { DataTable } from '../../components/data-table';
import { HistoryLink } from '../../components/history-link';
import { ErrorBox, Field, FieldError, when } from '../../components/ui';
import { useAsync } from '../../lib/use-async';
import { effectiveText } from './effective';

export function AllowlistPanel({
  writable,
  onNotice,
  changes,
}: {
  writable: boolean;
  onNotice: (text: string) => void;
  changes: number;
}) {
  const [form, setForm] = useState({ value: '', reason: '', ttl: '24h' });
  const [error, setError] = useState<unknown>(null);
  const list = useAsync(() => unwrap(api.GET('/api/ip/allowlist')), [changes]);

  const add = async () => {
    setError(null);
    try {
      const body = { value: form.value, reason: form.reason || undefined, ttl: form.ttl === '' ? null : form.ttl };
      const entry = await unwrap(api.POST('/api/ip/allowlist', { body }));
      onNotice(
        `Allowlisted ${entry.value}${entry.expires_at ? ` until ${when(entry.expires_at)}` : ''}; removed ${entry.removed.length} decision(s). ${effectiveText(entry.effective_within_s, 'stops')}`,
      );
      setForm({ ...form, value: '', reason: '' });
    } catch (err) {
      setError(err);
    }
  };

  const remove = async (id: string, value: string) => {
    setError(null);
    try {
      const { response, error: failure } = await api.DELETE('/api/ip/allowlist/{id}', { params: { path: { id } } });
      if (!response.ok) throw toApiError(response.status, failure);
      onNotice(`Removed the allowlist entry for ${value}: CrowdSec may block it again.`);
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section class="card" id="allowlist">
      <h2>Allowlist</h2>
      <p class="muted small">
        An active entry removes the CrowdSec decisions on it at once and on every sweep, and refuses manual bans.{' '}
        <HistoryLink path="crowdsec/allowlist.yaml">Allowlist history</HistoryLink>
      </p>
      <ErrorBox error={list.error} />
      <DataTable
        id="allowlist-table"
        rows={list.data ?? []}
        rowKey={(e) => e.id}
        rowProps={(e) => ({ 'data-entry': e.value })}
        empty={list.loading ? 'Loading…' : 'No allowlist entries'}
        columns={[
          { title: 'Value', cell: (e) => <code>{e.value}</code> },
          { title: 'Reason', cell: (e) => e.reason },
          { title: 'Expires', cell: (e) => (e.expires_at ? when(e.expires_at) : 'never') },
          { title: 'Removed', cell: (e) => e.removed_decisions },
          { title: 'By', cell: (e) => e.created_by },
          {
            title: '',
            class: 'actions',
            cell: (e) =>
              writable && (
                <button type="button" class="danger" onClick={() => void remove(e.id, e.value)}>
                  Remove
                </button>
              ),
          },
        ]}
      />
      {writable && (
        <form
          class="form-row"
          id="allowlist-add"
          onSubmit={(event) => {
            event.preventDefault();
            void add();
          }}
        >
          <Field label="Allow value">
            <input
              name="value"
              value={form.value}
              required
              placeholder="IP or CIDR"
              onInput={(e) => setForm({ ...form, value: e.currentTarget.value.trim() })}
            />
            <FieldError error={error} pointer="/value" />
          </Field>
          <Field label="TTL" hint="Go duration; empty = no expiry">
            <input
              name="ttl"
              value={form.ttl}
              placeholder="24h"
              onInput={(e) => setForm({ ...form, ttl: e.currentTarget.value.trim() })}
            />
            <FieldError error={error} pointer="/ttl" />
          </Field>
          <Field label="Why">
            <input
              name="reason"
              value={form.reason}
              maxLength={200}
              onInput={(e) => setForm({ ...form, reason: e.currentTarget.value })}
            />
            <FieldError error={error} pointer="/reason" />
          </Field>
          <div>
            <button type="submit" class="primary">
              Allowlist
            </button>
          </div>
        </form>
      )}
      <ErrorBox error={error} />
    </section>
  );
}
