/** Security screen: CrowdSec decisions (API.md §4.23) — filter, add a ban/captcha, delete one. */
import { useState } from 'preact/hooks';
import { api, ApiError, toApiError, unwrap } from '../../api/client';
import type { Reply } from '../../api/types';
import { DataTable } from '../../components/data-table';
import { ErrorBox, Field, FieldError, when } from '../../components/ui';
import { useAsync } from '../../lib/use-async';
import { effectiveText } from './effective';

type Decision = Reply<'/api/ip/decisions', 'get'>[number];

export function DecisionsPanel({
  writable,
  onNotice,
  changes,
}: {
  writable: boolean;
  onNotice: (text: string) => void;
  changes: number;
}) {
  const [filter, setFilter] = useState('');
  const [applied, setApplied] = useState('');
  const [form, setForm] = useState({ value: '', type: 'ban' as 'ban' | 'captcha', duration: '4h', reason: '' });
  const [error, setError] = useState<unknown>(null);
  const list = useAsync(
    () => unwrap(api.GET('/api/ip/decisions', { params: { query: applied ? { value: applied } : {} } })),
    [applied, changes],
  );

  const add = async () => {
    setError(null);
    try {
      const body = {
        value: form.value,
        type: form.type,
        duration: form.duration || undefined,
        reason: form.reason || undefined,
      };
      const result = await unwrap(api.POST('/api/ip/decisions', { body }));
      onNotice(`Added ${form.type} on ${form.value}. ${effectiveText(result.effective_within_s, 'starts')}`);
      setForm({ ...form, value: '', reason: '' });
    } catch (err) {
      setError(err);
    }
  };

  const remove = async (d: Decision) => {
    setError(null);
    try {
      const { response, error: failure } = await api.DELETE('/api/ip/decisions/{id}', {
        params: { path: { id: String(d.id) } },
      });
      if (!response.ok) throw toApiError(response.status, failure);
      const header = response.headers.get('x-effective-within');
      onNotice(
        `Deleted decision ${d.id} on ${d.value}. ${effectiveText(header === null ? null : Number(header), 'stops')}`,
      );
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section class="card" id="decisions">
      <h2>Decisions</h2>
      <form
        class="form-row"
        id="decision-filter"
        onSubmit={(event) => {
          event.preventDefault();
          setApplied(filter.trim());
        }}
      >
        <Field label="Filter by value">
          <input
            name="filter"
            value={filter}
            placeholder="192.0.2.7 or 198.51.100.0/24"
            onInput={(e) => setFilter(e.currentTarget.value)}
          />
        </Field>
        <div>
          <button type="submit">Filter</button>
        </div>
      </form>
      {notConfigured(list.error) ? (
        <div class="notice" id="decisions-not-configured">
          {(list.error as ApiError).message}
        </div>
      ) : (
        <ErrorBox error={list.error} />
      )}
      <DataTable
        id="decisions-table"
        rows={list.data ?? []}
        rowKey={(d) => String(d.id)}
        rowProps={(d) => ({ 'data-decision': d.value })}
        empty={list.loading ? 'Loading…' : 'No active decisions'}
        columns={[
          { title: 'Value', cell: (d) => <code>{d.value}</code> },
          { title: 'Type', cell: (d) => d.type },
          { title: 'Scope', cell: (d) => d.scope },
          { title: 'Origin', cell: (d) => d.origin },
          { title: 'Reason', cell: (d) => d.scenario },
          { title: 'Expires', cell: (d) => when(d.expires_at) },
          {
            title: '',
            class: 'actions',
            cell: (d) =>
              writable && (
                <button type="button" class="danger" onClick={() => void remove(d)}>
                  Delete
                </button>
              ),
          },
        ]}
      />
      {writable && (
        <form
          class="form-row"
          id="decision-add"
          onSubmit={(event) => {
            event.preventDefault();
            void add();
          }}
        >
          <Field label="Ban value">
            <input
              name="value"
              value={form.value}
              required
              placeholder="IP or CIDR"
              onInput={(e) => setForm({ ...form, value: e.currentTarget.value.trim() })}
            />
            <FieldError error={error} pointer="/value" />
          </Field>
          <Field label="Type">
            <select
              name="type"
              value={form.type}
              onChange={(e) => setForm({ ...form, type: e.currentTarget.value as 'ban' | 'captcha' })}
            >
              <option value="ban">ban</option>
              <option value="captcha">captcha</option>
            </select>
          </Field>
          <Field label="Duration">
            <input
              name="duration"
              value={form.duration}
              placeholder="4h"
              onInput={(e) => setForm({ ...form, duration: e.currentTarget.value.trim() })}
            />
            <FieldError error={error} pointer="/duration" />
          </Field>
          <Field label="Reason">
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
              Add decision
            </button>
          </div>
        </form>
      )}
      <ErrorBox error={error} />
    </section>
  );
}

/** CrowdSec without a bouncer key is a state of the install, not a failure of this screen. */
const notConfigured = (error: unknown): boolean => error instanceof ApiError && error.id === 'not_configured';
