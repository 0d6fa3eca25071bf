/**
 * "Import from middleware-manager" on the middlewares screen (API.md §4.24): the chosen SQLite file
 * is sent as a dry run first, the report (what would be created and skipped) is shown, and "Import"
 * sends it again for real. Admin role only (in auth mode `all`).
 */
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { Dialog, ErrorBox } from '../components/ui';
import type { Session } from '../lib/session';

type Report = Awaited<ReturnType<typeof importDatabase>>;

/** POST /api/import/middleware-manager with the file as application/octet-stream. */
function importDatabase(file: File, dryRun: boolean) {
  return unwrap(
    api.POST('/api/import/middleware-manager', {
      params: { query: dryRun ? { dry_run: 'true' } : {} },
      // the database goes as is; the route has no JSON body to type
      body: file as never,
      bodySerializer: (body: unknown) => body as BodyInit,
      headers: { 'Content-Type': 'application/octet-stream' },
    }),
  );
}

/** Whether the caller may import: admin, or an open config class (auth off/ops run as admin). */
export function canImport(session: Session): boolean {
  return session.role === null ? session.configOpen : session.role === 'admin';
}

export function MmImport({ onImported }: { onImported: () => void }) {
  const [open, setOpen] = useState(false);
  const [file, setFile] = useState<File | null>(null);
  const [report, setReport] = useState<Report | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const run = async (chosen: File, dryRun: boolean) => {
    setBusy(true);
    setError(null);
    try {
      setReport(await importDatabase(chosen, dryRun));
      if (!dryRun) onImported();
    } catch (err) {
      setReport(null);
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const close = () => {
    setOpen(false);
    setFile(null);
    setReport(null);
    setError(null);
  };
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        Import from middleware-manager
      </button>
      <Dialog title="Import from middleware-manager" open={open} onClose={close}>
        <p class="muted small">
          Its SQLite database (<code>/data/middleware.db</code>, copied while it is stopped). Middlewares and services are
          matched by name, resources by router name, then host; nothing of ours is overwritten.
        </p>
        <input
          type="file"
          accept=".db,.sqlite,.sqlite3,application/octet-stream"
          data-mm-import-file
          disabled={busy}
          onChange={(event) => {
            const chosen = event.currentTarget.files?.[0] ?? null;
            setFile(chosen);
            setReport(null);
            if (chosen) void run(chosen, true);
          }}
        />
        <ErrorBox error={error} title="Import refused" />
        {report && <ImportReport report={report} />}
        <div class="form-actions">
          {file && report?.dry_run && (
            <button type="button" class="primary" disabled={busy || isEmpty(report)} onClick={() => void run(file, false)}>
              Import
            </button>
          )}{' '}
          <button type="button" onClick={close}>
            Close
          </button>
        </div>
      </Dialog>
    </>
  );
}

const isEmpty = (report: Report) => Object.values(report.created).every((list) => list.length === 0);

function ImportReport({ report }: { report: Report }) {
  const { created } = report;
  return (
    <div data-mm-import-report={report.dry_run ? 'dry-run' : 'done'} role="status">
      <p>
        <strong>{report.dry_run ? 'Would create' : 'Created'}:</strong> {created.middlewares.length} middlewares,{' '}
        {created.services.length} services, {created.assignments.length} assignments, {created.overrides.length} overrides;{' '}
        {report.skipped.length} skipped.
      </p>
      <ul class="small">
        {created.middlewares.map((m) => (
          <li key={`m-${m.id}`} data-created-middleware={m.id}>
            middleware <code>{m.id}</code> ({m.type})
          </li>
        ))}
        {created.services.map((s) => (
          <li key={`s-${s.id}`}>
            service <code>{s.id}</code> ({s.protocol} {s.type})
          </li>
        ))}
        {created.assignments.map((a) => (
          <li key={`a-${a.resource_id}-${a.kind}-${a.id}`}>
            {a.resource_id} ← {a.kind} <code>{a.id}</code>
            {a.priority !== null && ` (priority ${a.priority})`}
          </li>
        ))}
        {created.overrides.map((o) => (
          <li key={`o-${o.resource_id}-${o.kind}`}>
            {o.resource_id}: {o.kind} override
          </li>
        ))}
      </ul>
      {report.skipped.length > 0 && (
        <details open={report.dry_run}>
          <summary>Skipped ({report.skipped.length})</summary>
          <ul class="small">
            {report.skipped.map((s, i) => (
              <li key={i} data-skipped={s.kind}>
                {s.kind} <strong>{s.name}</strong>: {s.reason}
              </li>
            ))}
          </ul>
        </details>
      )}
      {report.warnings.map((w) => (
        <p key={w} class="small warn">
          {w}
        </p>
      ))}
    </div>
  );
}
