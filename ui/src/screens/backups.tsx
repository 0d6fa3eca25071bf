/** Backups: create with a note, list, download, delete, and restore after a confirmation that names the safety backup. */
import { useState } from 'preact/hooks';
import { api, saveBlob, unwrap } from '../api/client';
import type { Backup, RestoreResult } from '../api/types';
import { bytes, Dialog, ErrorBox, Field, FieldError, Loading, PageHeader, when } from '../components/ui';
import { DataTable } from '../components/data-table';
import { useAsync } from '../lib/use-async';
import { useLiveReload } from '../lib/events';
import { canWrite, useSession } from '../lib/session';

export default function Backups() {
  const { session } = useSession();
  const writable = canWrite(session);
  const list = useAsync(() => unwrap(api.GET('/api/backup/list')), []);
  const [note, setNote] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [restoring, setRestoring] = useState<Backup | null>(null);
  const [restoreTokens, setRestoreTokens] = useState(false);
  const [result, setResult] = useState<RestoreResult | null>(null);
  const [created, setCreated] = useState<string | null>(null);
  const [cleaned, setCleaned] = useState<{ deleted: string[]; kept: number } | null>(null);
  useLiveReload((e) => e.type === 'backup', list.reload);
  const act = async (action: () => Promise<unknown>) => {
    setError(null);
    setBusy(true);
    try {
      await action();
      list.reload();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <PageHeader title="Backups">
        {writable && (
          <button type="button" disabled={busy} onClick={() => confirm('Apply the retention policy now? Backups past it are deleted.') && act(async () => setCleaned(await unwrap(api.POST('/api/backup/cleanup'))))}>
            Apply retention now
          </button>
        )}
      </PageHeader>
      <ErrorBox error={error} />
      {result && (
        <div class="success" role="status" id="restore-result">
          Restored <code>{result.restored}</code> ({result.files} files). The state before the restore was saved as <code>{result.safety_backup}</code>.
        </div>
      )}
      {cleaned && (
        <div class="success" role="status" id="cleanup-result">
          Retention applied: {cleaned.deleted.length ? <>deleted {cleaned.deleted.map((id) => <code key={id}>{id} </code>)}</> : 'nothing to delete'}; {cleaned.kept} kept.
        </div>
      )}
      {created && (
        <div class="success" role="status">
          Created <code>{created}</code>.
        </div>
      )}
      {writable && (
        <form
          class="card form-row"
          id="backup-create"
          onSubmit={(event) => {
            event.preventDefault();
            void act(async () => {
              const backup = await unwrap(api.POST('/api/backup/create', { body: { note } }));
              setCreated('id' in backup ? String(backup.id) : null);
              setNote('');
            });
          }}
        >
          <Field label="Note (optional)">
            <input name="note" maxLength={200} value={note} onInput={(e) => setNote(e.currentTarget.value)} />
            <FieldError error={error} pointer="/note" />
          </Field>
          <div>
            <button type="submit" class="primary" disabled={busy}>
              Create backup
            </button>
          </div>
        </form>
      )}
      <ErrorBox error={list.error} />
      <Loading when={list.loading && !list.data} />
      {list.data && (
        <DataTable
          id="backup-list"
          rows={list.data}
          rowKey={(b) => b.id}
          rowProps={(b) => ({ 'data-backup': b.id })}
          empty="No backups yet."
          columns={[
            {
              title: 'Backup',
              cell: (b) => (
                <>
                  <code>{b.id}</code>
                  <div class="muted small">{when(b.created_at)}</div>
                </>
              ),
            },
            { title: 'Kind', cell: (b) => b.kind },
            { title: 'Size', cell: (b) => `${bytes(b.size)} · ${b.files} files` },
            { title: 'Note', cell: (b) => b.note },
            {
              title: '',
              class: 'actions',
              cell: (b) => (
                <>
                  <button type="button" onClick={() => act(async () => saveBlob(await unwrap(api.GET('/api/backup/{id}/download', { params: { path: { id: b.id } }, parseAs: 'blob' })), `${b.id}.tar.gz`))}>
                    Download
                  </button>
                  {writable && (
                    <>
                      <button
                        type="button"
                        onClick={() => {
                          setResult(null);
                          setRestoring(b);
                        }}
                      >
                        Restore…
                      </button>
                      <button type="button" class="danger" onClick={() => confirm(`Delete ${b.id}?`) && act(() => unwrap(api.DELETE('/api/backup/{id}', { params: { path: { id: b.id } } })))}>
                        Delete
                      </button>
                    </>
                  )}
                </>
              ),
            },
          ]}
        />
      )}
      <Dialog title="Restore this backup?" open={restoring !== null} onClose={() => setRestoring(null)}>
        {restoring && (
          <form
            method="dialog"
            onSubmit={(event) => {
              event.preventDefault();
              const target = restoring;
              setRestoring(null);
              void act(async () => setResult(await unwrap(api.POST('/api/backup/restore', { body: { backup_id: target.id, restore_tokens: restoreTokens } }))));
            }}
          >
            <p>
              The data dir is replaced by <code>{restoring.id}</code> ({when(restoring.created_at)}
              {restoring.note ? `, “${restoring.note}”` : ''}). Before that, the server saves the current state as a <strong>pre-restore</strong> safety backup,
              which will be named once the restore is done.
            </p>
            <label class="check">
              <input type="checkbox" checked={restoreTokens} onChange={(e) => setRestoreTokens(e.currentTarget.checked)} /> Also restore API tokens (otherwise the current
              tokens are kept)
            </label>
            <div class="actions">
              <button type="submit" class="danger">
                Restore
              </button>
              <button type="button" onClick={() => setRestoring(null)}>
                Cancel
              </button>
            </div>
          </form>
        )}
      </Dialog>
    </>
  );
}
