/**
 * Provider targets (several Traefik instances): each target's URL, ETag and the instances polling it
 * (current or behind), and a form to create, edit or delete one. Lists are one entry per line.
 */
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import type { ConfigStatus, Target } from '../api/types';
import { Badge, Empty, ErrorBox, Field, FieldError, Loading, PageHeader, when } from '../components/ui';
import { HistoryLink } from '../components/history-link';
import { useAsync } from '../lib/use-async';
import { objectsOf, useLiveReload } from '../lib/events';
import { canWrite, useSession } from '../lib/session';

interface Draft {
  name: string;
  includeHosts: string;
  includeResources: string;
  excludeHosts: string;
  excludeResources: string;
  entrypoints: string;
  middlewares: string;
}
const BLANK: Draft = { name: '', includeHosts: '', includeResources: '', excludeHosts: '', excludeResources: '', entrypoints: '', middlewares: '' };

const lines = (text: string) => text.split(/[\n,]/).map((l) => l.trim()).filter(Boolean);

function draftOf(t: Target): Draft {
  return {
    name: t.name,
    includeHosts: t.include?.hosts.join('\n') ?? '',
    includeResources: t.include?.resources.join('\n') ?? '',
    excludeHosts: t.exclude.hosts.join('\n'),
    excludeResources: t.exclude.resources.join('\n'),
    entrypoints: Object.entries(t.entrypoints).map(([from, to]) => `${from}=${to}`).join('\n'),
    middlewares: t.middlewares.join('\n'),
  };
}

function bodyOf(d: Draft) {
  const include = { hosts: lines(d.includeHosts), resources: lines(d.includeResources) };
  const exclude = { hosts: lines(d.excludeHosts), resources: lines(d.excludeResources) };
  const entrypoints = Object.fromEntries(
    lines(d.entrypoints).map((l) => {
      const [from, to = ''] = l.split('=').map((p) => p.trim());
      return [from, to]; // a line without "=" is sent with an empty name: the server answers 422 naming it
    }),
  );
  return {
    name: d.name,
    ...(include.hosts.length || include.resources.length ? { include } : {}),
    exclude,
    entrypoints,
    middlewares: lines(d.middlewares),
  };
}

export default function Targets() {
  const { session } = useSession();
  const writable = canWrite(session);
  const list = useAsync(() => unwrap(api.GET('/api/proxy-config/targets')), []);
  const status = useAsync(() => unwrap(api.GET('/api/proxy-config/status')).catch(() => null), []);
  const reload = () => {
    list.reload();
    status.reload();
  };
  useLiveReload(objectsOf('targets'), reload);
  const [editing, setEditing] = useState<Target | null>(null);
  const [draft, setDraft] = useState<Draft>(BLANK);
  const [error, setError] = useState<unknown>(null);

  const edit = (t: Target | null) => {
    setEditing(t);
    setDraft(t ? draftOf(t) : BLANK);
    setError(null);
  };
  const save = async () => {
    setError(null);
    try {
      if (editing) await unwrap(api.PUT('/api/proxy-config/targets/{id}', { params: { path: { id: editing.id } }, body: bodyOf(draft), headers: { 'If-Match': `"${editing.etag}"` } }));
      else await unwrap(api.POST('/api/proxy-config/targets', { body: bodyOf(draft) }));
      edit(null);
      reload();
    } catch (err) {
      setError(err);
    }
  };
  const remove = async (t: Target) => {
    if (!confirm(`Delete target ${t.id}?`)) return;
    try {
      await unwrap(api.DELETE('/api/proxy-config/targets/{id}', { params: { path: { id: t.id } } }));
      if (editing?.id === t.id) edit(null);
      reload();
    } catch (err) {
      setError(err);
    }
  };

  const documents = status.data?.targets ?? [];
  const area = (key: keyof Draft, label: string, pointer: string, hint?: string) => (
    <Field label={label} hint={hint}>
      <textarea name={key} rows={3} value={draft[key]} onInput={(e) => setDraft({ ...draft, [key]: e.currentTarget.value })} />
      <FieldError error={error} pointer={pointer} />
    </Field>
  );
  return (
    <>
      <PageHeader title="Provider targets" />
      <p class="muted">
        Each Traefik instance can poll its own document: <code>/api/v1/proxy-config/&lt;id&gt;</code>. Without a target it gets the default document.
      </p>
      <ErrorBox error={list.error} />
      <Loading when={list.loading && !list.data} />
      <DocumentCard id="default" name="Default document" url="/api/v1/proxy-config" documents={documents} />
      {list.data?.length === 0 && <Empty>No targets yet.</Empty>}
      {list.data?.map((t) => (
        <DocumentCard key={t.id} id={t.id} name={t.name} url={t.url} documents={documents}>
          <div class="actions">
            <HistoryLink path={`targets/${t.id}`} />
            {writable && (
              <>
                <button type="button" onClick={() => edit(t)}>
                  Edit
                </button>
                <button type="button" class="danger" onClick={() => remove(t)}>
                  Delete
                </button>
              </>
            )}
          </div>
        </DocumentCard>
      ))}
      {writable && (
        <form
          class="card"
          id="target-form"
          onSubmit={(event) => {
            event.preventDefault();
            void save();
          }}
        >
          <h2>{editing ? `Edit ${editing.id}` : 'New target'}</h2>
          <Field label="Name">
            <input name="name" value={draft.name} onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })} required />
            <FieldError error={error} pointer="/name" />
          </Field>
          <div class="form-row">
            {area('includeHosts', 'Include hosts', '/include/hosts', '*.example.com (one label), **.example.com (any depth); empty with no resources: everything')}
            {area('includeResources', 'Include resources', '/include/resources', 'resource ids')}
          </div>
          <div class="form-row">
            {area('excludeHosts', 'Exclude hosts', '/exclude/hosts')}
            {area('excludeResources', 'Exclude resources', '/exclude/resources')}
          </div>
          <div class="form-row">
            {area('entrypoints', 'Entry point renames', '/entrypoints', 'websecure=https')}
            {area('middlewares', 'Extra middlewares', '/middlewares', 'ids appended to every HTTP router')}
          </div>
          <ErrorBox error={error} />
          <div class="actions">
            <button type="submit" class="primary">
              {editing ? 'Save' : 'Create target'}
            </button>
            {editing && (
              <button type="button" onClick={() => edit(null)}>
                Cancel
              </button>
            )}
          </div>
        </form>
      )}
    </>
  );
}

type DocumentStatus = ConfigStatus['targets'][number];

function DocumentCard({ id, name, url, documents, children }: { id: string; name: string; url: string; documents: DocumentStatus[]; children?: preact.ComponentChildren }) {
  const doc = documents.find((d) => d.id === id);
  return (
    <div class="card" data-target={id}>
      <h2>{name}</h2>
      <p class="muted small">
        <code>{url}</code> · ETag <code>{doc?.etag ?? '—'}</code> · generated {when(doc?.generated_at)}
      </p>
      {doc && doc.instances.length === 0 && <p class="muted">No instance polled it in the last 10 minutes.</p>}
      {doc?.instances.map((i) => (
        <div key={`${i.remote_address} ${i.user_agent} ${i.token_name ?? ''}`} data-instance={i.user_agent}>
          <Badge tone={i.current ? 'ok' : 'warn'}>{i.current ? 'current' : 'behind'}</Badge> {i.remote_address} · {i.user_agent || 'no User-Agent'}
          {i.token_name && <> · token {i.token_name}</>} · last poll {when(i.last_poll)}
        </div>
      ))}
      {children}
    </div>
  );
}
