/**
 * The files of the static configuration group on the plugins screen (GET|PUT /api/static/settings):
 * the compose file whose `services.gerbil.ports` Sync and Apply use, and Traefik's plugins-local
 * directory that vendoring writes. Each shows the path in effect and where it comes from; Save sends
 * the changed fields, an emptied field clears settings.yaml's value (the env value applies again).
 */
import { useEffect, useState } from 'preact/hooks';
import { api, unwrap } from '../../api/client';
import { ErrorBox, Field, FieldError } from '../../components/ui';
import { useAsync } from '../../lib/use-async';

type Name = 'compose_file' | 'plugins_local_dir';
interface View {
  path: string | null;
  source: 'settings' | 'env' | 'unset';
  exists: boolean;
  writable: boolean;
}

const LABELS: Record<Name, { label: string; placeholder: string; kind: string }> = {
  compose_file: {
    label: "Compose file (Gerbil's ports)",
    placeholder: '/opt/pangolin/docker-compose.yml',
    kind: 'file',
  },
  plugins_local_dir: {
    label: "Plugins-local directory (Traefik's /plugins-local on this host)",
    placeholder: '/opt/pangolin/config/traefik/plugins-local',
    kind: 'directory',
  },
};
const NAMES = Object.keys(LABELS) as Name[];

/** `source, exists|missing, writable|read-only`, as the static config path shows it. */
const describe = (view: View, kind: string) =>
  `${view.source}, ${view.exists ? 'exists' : `${kind} missing`}, ${view.writable ? 'writable' : 'read-only'}`;

/** `onSaved` lets the screen reload what depends on the files (entry points, plugins). */
export function StaticSettings({ writable, onSaved }: { writable: boolean; onSaved: () => void }) {
  const current = useAsync(() => unwrap(api.GET('/api/static/settings')), []);
  const [drafts, setDrafts] = useState<Record<Name, string>>({ compose_file: '', plugins_local_dir: '' });
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // the inputs hold what settings.yaml holds; an env value stays the placeholder-like default
  const stored = (name: Name) => (current.data?.[name].source === 'settings' ? (current.data[name].path ?? '') : '');
  useEffect(() => {
    if (current.data)
      setDrafts({ compose_file: stored('compose_file'), plugins_local_dir: stored('plugins_local_dir') });
  }, [current.data]);

  const save = async () => {
    const body: Partial<Record<Name, string | null>> = {};
    for (const name of NAMES) {
      const draft = drafts[name].trim();
      if (draft !== stored(name)) body[name] = draft === '' ? null : draft;
    }
    setError(null);
    setNotice(null);
    if (Object.keys(body).length === 0) {
      setNotice('Nothing changed.');
      return;
    }
    setBusy(true);
    try {
      await unwrap(api.PUT('/api/static/settings', { body }));
      setNotice(`Saved ${Object.keys(body).join(' and ')}.`);
      current.reload();
      onSaved();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div data-section="static-settings">
      <h3>Compose file and plugins-local directory</h3>
      <ErrorBox error={current.error} />
      {current.data && (
        <ul class="plain">
          {NAMES.map((name) => (
            <li key={name} data-setting={name}>
              {LABELS[name].label}: <code>{current.data![name].path ?? 'not set'}</code>{' '}
              {current.data![name].path && (
                <span class="muted">({describe(current.data![name], LABELS[name].kind)})</span>
              )}
            </li>
          ))}
        </ul>
      )}
      {notice && (
        <div class="notice" role="status">
          {notice}
        </div>
      )}
      <ErrorBox error={error} title="Not saved" />
      {writable && current.data && (
        <form
          class="form-row"
          onSubmit={(event) => {
            event.preventDefault();
            void save();
          }}
        >
          {NAMES.map((name) => (
            <Field
              key={name}
              label={LABELS[name].label}
              hint={
                current.data![name].source === 'env' ? `empty: ${current.data![name].path} (env)` : 'empty: not set'
              }
            >
              <input
                name={name}
                value={drafts[name]}
                placeholder={LABELS[name].placeholder}
                onInput={(e) => {
                  const value = e.currentTarget.value;
                  setDrafts((d) => ({ ...d, [name]: value }));
                }}
              />
              <FieldError error={error} pointer={`/${name}`} />
            </Field>
          ))}
          <div>
            <button type="submit" disabled={busy}>
              Save files
            </button>
          </div>
        </form>
      )}
    </div>
  );
}
