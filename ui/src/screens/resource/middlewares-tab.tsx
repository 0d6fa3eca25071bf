/**
 * Assigned middlewares in the order Traefik runs them (priority, highest first). Drag a row (or use
 * the ↑/↓ buttons, for keyboards) to reorder: the new order is saved as spaced priorities in one bulk call.
 */
import { useState } from 'preact/hooks';
import { api, unwrap } from '../../api/client';
import type { Resource } from '../../api/types';
import { ErrorBox, Field, FieldError } from '../../components/ui';
import { DataTable } from '../../components/data-table';
import { useAsync } from '../../lib/use-async';

interface Props {
  resource: Resource;
  writable: boolean;
  onChange: (updated?: Resource) => void;
}

/** Priorities for an order: 10·n … 10, so later single inserts fit between them. */
export function prioritiesFor(count: number): number[] {
  return Array.from({ length: count }, (_, index) => (count - index) * 10);
}

export function MiddlewaresTab({ resource, writable, onChange }: Props) {
  const id = resource.id;
  const all = useAsync(() => unwrap(api.GET('/api/middlewares')), []);
  const [error, setError] = useState<unknown>(null);
  const [dragging, setDragging] = useState<number | null>(null);
  const [choice, setChoice] = useState('');
  const [priority, setPriority] = useState('100');
  const [external, setExternal] = useState({ name: '', priority: '100', provider: '' });

  const run = async (action: () => Promise<Resource | undefined | void>) => {
    setError(null);
    try {
      onChange((await action()) ?? undefined);
    } catch (err) {
      setError(err);
    }
  };
  const reorder = (from: number, to: number) => {
    if (from === to || to < 0 || to >= resource.middlewares.length) return;
    const order = [...resource.middlewares];
    const [moved] = order.splice(from, 1);
    order.splice(to, 0, moved);
    const priorities = prioritiesFor(order.length);
    void run(() =>
      unwrap(
        api.POST('/api/resources/{id}/middlewares/bulk', {
          params: { path: { id } },
          body: { replace: true, middlewares: order.map((m, index) => ({ middleware_id: m.id, priority: priorities[index] })) },
        }),
      ),
    );
  };
  const assigned = new Set(resource.middlewares.map((m) => m.id));
  const available = (all.data ?? []).filter((m) => !assigned.has(m.id));

  return (
    <section>
      <ErrorBox error={error} />
      <ErrorBox error={all.error} title="Middlewares" />
      <DataTable
        id="assigned-middlewares"
        rows={resource.middlewares}
        rowKey={(m) => m.id}
        empty="No middleware assigned."
        rowProps={(m, index) => ({
          'data-middleware': m.id,
          class: dragging === index ? 'drag-row dragging' : 'drag-row',
          draggable: writable,
          onDragStart: (event) => {
            setDragging(index);
            event.dataTransfer?.setData('text/plain', String(index));
          },
          onDragOver: (event) => event.preventDefault(),
          onDrop: (event) => {
            event.preventDefault();
            const from = Number(event.dataTransfer?.getData('text/plain'));
            setDragging(null);
            reorder(from, index);
          },
          onDragEnd: () => setDragging(null),
        })}
        columns={[
          { title: 'Order', cell: (_, index) => index + 1 },
          { title: 'Middleware', cell: (m) => <a href={`/middlewares/${encodeURIComponent(m.id)}`}>{m.id}</a> },
          { title: 'Priority', cell: (m) => m.priority },
          {
            title: '',
            class: 'actions',
            cell: (m, index) =>
              writable && (
                <>
                  <button type="button" aria-label={`Move ${m.id} up`} disabled={index === 0} onClick={() => reorder(index, index - 1)}>
                    ↑
                  </button>
                  <button type="button" aria-label={`Move ${m.id} down`} disabled={index === resource.middlewares.length - 1} onClick={() => reorder(index, index + 1)}>
                    ↓
                  </button>
                  <button type="button" class="danger" onClick={() => run(() => unwrap(api.DELETE('/api/resources/{id}/middlewares/{middlewareId}', { params: { path: { id, middlewareId: m.id } } })))}>
                    Remove
                  </button>
                </>
              ),
          },
        ]}
      />
      {writable && (
        <form
          class="card"
          id="assign-middleware"
          onSubmit={(event) => {
            event.preventDefault();
            if (!choice) return;
            void run(() => unwrap(api.POST('/api/resources/{id}/middlewares', { params: { path: { id } }, body: { middleware_id: choice, priority: Number(priority) } })));
            setChoice('');
          }}
        >
          <h3>Assign a middleware</h3>
          <div class="form-row">
            <Field label="Middleware">
              <select name="middleware_id" value={choice} onChange={(e) => setChoice(e.currentTarget.value)} required>
                <option value="">Choose…</option>
                {available.map((m) => (
                  <option key={m.id} value={m.id}>
                    {m.name} ({m.type})
                  </option>
                ))}
              </select>
            </Field>
            <Field label="Priority (higher runs first)">
              <input type="number" name="priority" min={1} max={10000} value={priority} onInput={(e) => setPriority(e.currentTarget.value)} />
              <FieldError error={error} pointer="/priority" />
            </Field>
          </div>
          <button type="submit" class="primary">
            Assign
          </button>
        </form>
      )}
      <h3>External middlewares</h3>
      <p class="muted small">References to middlewares defined elsewhere (e.g. crowdsec@file).</p>
      <ul>
        {resource.external_middlewares.map((m) => (
          <li key={m.name}>
            <code>{m.name}</code> priority {m.priority} {m.provider && `provider ${m.provider}`}{' '}
            {writable && (
              <button
                type="button"
                class="link-button"
                onClick={() => run(() => unwrap(api.DELETE('/api/resources/{id}/external-middlewares/{name}', { params: { path: { id, name: m.name } } })))}
              >
                remove
              </button>
            )}
          </li>
        ))}
        {resource.external_middlewares.length === 0 && <li class="muted">none</li>}
      </ul>
      {writable && (
        <form
          class="card"
          onSubmit={(event) => {
            event.preventDefault();
            void run(() =>
              unwrap(
                api.POST('/api/resources/{id}/external-middlewares', {
                  params: { path: { id } },
                  body: { name: external.name, priority: Number(external.priority), ...(external.provider ? { provider: external.provider } : {}) },
                }),
              ),
            );
          }}
        >
          <div class="form-row">
            <Field label="Name">
              <input name="external_name" placeholder="crowdsec@file" value={external.name} onInput={(e) => setExternal({ ...external, name: e.currentTarget.value })} required />
              <FieldError error={error} pointer="/name" />
            </Field>
            <Field label="Priority">
              <input type="number" min={1} max={10000} value={external.priority} onInput={(e) => setExternal({ ...external, priority: e.currentTarget.value })} />
            </Field>
            <Field label="Provider (optional)">
              <input value={external.provider} onInput={(e) => setExternal({ ...external, provider: e.currentTarget.value })} />
            </Field>
          </div>
          <button type="submit">Add external reference</button>
        </form>
      )}
    </section>
  );
}
