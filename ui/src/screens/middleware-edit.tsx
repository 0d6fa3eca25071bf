/** Create (optionally from a shipped template) or edit one middleware; delete with the in-use answer shown. */
import { useEffect, useState } from 'preact/hooks';
import { middlewareTemplates } from 'virtual:templates';
import { api, ApiError, unwrap } from '../api/client';
import type { Middleware, MiddlewareType } from '../api/types';
import { ErrorBox, Field, FieldError, Loading, PageHeader, when } from '../components/ui';
import { navigate } from '../lib/router';
import { canWrite, useSession } from '../lib/session';
import type { ScreenProps } from '../routes';
import { ConfigEditor } from './objects/config-editor';
import { ConfigForm, hasForm, MIDDLEWARE_TYPES } from './objects/middleware-forms';

interface Draft {
  id: string;
  name: string;
  type: string;
  description: string;
  config: Record<string, unknown>;
}
const BLANK: Draft = { id: '', name: '', type: 'headers', description: '', config: {} };

export default function MiddlewareEdit({ params }: ScreenProps) {
  const { session } = useSession();
  const id = params.id;
  const isNew = !id;
  const writable = canWrite(session);
  const [draft, setDraft] = useState<Draft>(BLANK);
  const [loaded, setLoaded] = useState<Middleware | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [error, setError] = useState<unknown>(null);
  const [parseError, setParseError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const [saved, setSaved] = useState(false);

  useEffect(() => {
    if (isNew) return;
    unwrap(api.GET('/api/middlewares/{id}', { params: { path: { id } } })).then((m) => {
      setLoaded(m);
      setDraft({ id: m.id, name: m.name, type: m.type, description: m.description ?? '', config: m.config as Record<string, unknown> });
    }, setLoadError);
  }, [id]);

  const useTemplate = (templateId: string) => {
    const template = middlewareTemplates.find((t) => t.id === templateId);
    if (!template) return;
    setDraft({ id: '', name: `${template.name} copy`, type: template.type, description: template.description ?? '', config: structuredClone(template.config) });
  };

  const save = async () => {
    setSaving(true);
    setError(null);
    setSaved(false);
    const body = { name: draft.name, type: draft.type as MiddlewareType, description: draft.description, config: draft.config as never };
    try {
      if (isNew) {
        const created = await unwrap(api.POST('/api/middlewares', { body: { ...body, ...(draft.id ? { id: draft.id } : {}) } }));
        navigate(`/middlewares/${encodeURIComponent(created.id)}`, true);
      } else {
        const updated = await unwrap(api.PUT('/api/middlewares/{id}', { params: { path: { id } }, body, headers: loaded ? { 'If-Match': `"${loaded.etag}"` } : {} }));
        setLoaded(updated);
        setSaved(true);
      }
    } catch (err) {
      setError(err);
    } finally {
      setSaving(false);
    }
  };

  const remove = async (force: boolean) => {
    setError(null);
    try {
      await unwrap(api.DELETE('/api/middlewares/{id}', { params: { path: { id }, query: force ? { force: 'true' } : {} } }));
      navigate('/middlewares');
    } catch (err) {
      setError(err);
    }
  };

  if (loadError) return <ErrorBox error={loadError} />;
  if (!isNew && !loaded) return <Loading when />;
  const inUse = error instanceof ApiError && error.id === 'in_use';

  return (
    <>
      <PageHeader title={isNew ? 'New middleware' : draft.name}>
        {!isNew && (
          <a class="button" href={`/history?path=middlewares/${id}`} data-history-link>
            History
          </a>
        )}
        {!isNew && writable && (
          <button type="button" class="danger" onClick={() => confirm(`Delete middleware ${id}?`) && remove(false)}>
            Delete
          </button>
        )}
      </PageHeader>
      <p>
        <a href="/middlewares">← all middlewares</a>
      </p>
      {loaded && (
        <p class="muted small">
          id <code>{loaded.id}</code> · updated {when(loaded.updated_at)} · used by {loaded.used_by.length ? loaded.used_by.join(', ') : 'nothing'}
        </p>
      )}
      {loaded?.warnings.map((w) => (
        <div class="notice" key={w}>
          {w}
        </div>
      ))}
      {isNew && writable && (
        <div class="card">
          <Field label="Start from a template" hint="Shipped in config/templates/middlewares.yaml">
            <select name="template" onChange={(e) => useTemplate(e.currentTarget.value)}>
              <option value="">Blank</option>
              {middlewareTemplates.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name} ({t.type})
                </option>
              ))}
            </select>
          </Field>
        </div>
      )}
      <form
        class="card"
        id="middleware-form"
        onSubmit={(event) => {
          event.preventDefault();
          void save();
        }}
      >
        <fieldset disabled={!writable} style="border:0;padding:0;margin:0">
          <div class="form-row">
            <Field label="Name">
              <input name="name" value={draft.name} onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })} required />
              <FieldError error={error} pointer="/name" />
            </Field>
            {isNew && (
              <Field label="Id (optional)" hint="derived from the name when empty">
                <input name="id" value={draft.id} onInput={(e) => setDraft({ ...draft, id: e.currentTarget.value })} />
                <FieldError error={error} pointer="/id" />
              </Field>
            )}
            <Field label="Type">
              <select name="type" value={draft.type} onChange={(e) => setDraft({ ...draft, type: e.currentTarget.value, config: {} })}>
                {MIDDLEWARE_TYPES.map((t) => (
                  <option key={t}>{t}</option>
                ))}
              </select>
              <FieldError error={error} pointer="/type" />
            </Field>
          </div>
          <Field label="Description">
            <input name="description" value={draft.description} onInput={(e) => setDraft({ ...draft, description: e.currentTarget.value })} />
            <FieldError error={error} pointer="/description" />
          </Field>
          <h3>Configuration</h3>
          <ConfigEditor
            config={draft.config}
            onConfig={(config) => setDraft((d) => ({ ...d, config }))}
            error={error}
            formAvailable={hasForm(draft.type)}
            onParseError={setParseError}
            renderForm={() => <ConfigForm type={draft.type} config={draft.config} onChange={(config) => setDraft({ ...draft, config })} error={error} />}
          />
          <FieldError error={error} pointer="/config" />
        </fieldset>
        {parseError && <div class="field-error">{parseError}</div>}
        <ErrorBox error={error} />
        {inUse && writable && (
          <button type="button" class="danger" onClick={() => remove(true)}>
            Remove it from those resources and delete
          </button>
        )}
        {saved && <div class="success">Saved.</div>}
        {writable && (
          <div class="actions">
            <button type="submit" class="primary" disabled={saving || !!parseError}>
              {isNew ? 'Create middleware' : 'Save'}
            </button>
          </div>
        )}
      </form>
    </>
  );
}
