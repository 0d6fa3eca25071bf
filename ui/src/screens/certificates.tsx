/**
 * Certificates (issue 28): every certificate Traefik reports (its metrics, acme.json) with days left,
 * coloured by the expiry thresholds (14, 3, 0 days), from GET /api/certificates. Live: a
 * `certificate` event (a threshold reached) reloads it; Refresh checks the sources now. Without
 * either source (503 not_configured) the screen is in its empty state: a notice, not an error.
 */
import { useState } from 'preact/hooks';
import { api, ApiError, unwrap } from '../api/client';
import type { Reply } from '../api/types';
import { Badge, Empty, ErrorBox, Loading, PageHeader, when } from '../components/ui';
import { DataTable } from '../components/data-table';
import { useAsync } from '../lib/use-async';
import { useLiveReload } from '../lib/events';

type Report = Reply<'/api/certificates', 'get'>;
type Certificate = Report['certificates'][number];

/** The thresholds of the expiry check: > 14 days ok, ≤ 14 warning, ≤ 3 error, ≤ 0 expired. */
export function expiryTone(daysLeft: number): 'ok' | 'warn' | 'bad' {
  if (daysLeft > 14) return 'ok';
  return daysLeft > 3 ? 'warn' : 'bad';
}

function daysText(daysLeft: number): string {
  if (daysLeft < 0) return 'expired';
  if (daysLeft === 0) return 'expires today';
  return daysLeft === 1 ? '1 day' : `${daysLeft} days`;
}

export default function Certificates() {
  const report = useAsync(() => unwrap(api.GET('/api/certificates')), []);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  useLiveReload((e) => e.type === 'certificate', report.reload);
  const refreshNow = async () => {
    setBusy(true);
    setError(null);
    try {
      // the check runs now; the list then reloads with its result
      await unwrap(api.GET('/api/certificates', { params: { query: { refresh: true } } }));
      report.reload();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const data = report.data;
  const unconfigured = notConfigured(report.error);
  return (
    <>
      <PageHeader title="Certificates">
        <button
          type="button"
          id="certificates-refresh"
          disabled={busy || unconfigured}
          onClick={() => void refreshNow()}
        >
          {busy ? 'Checking…' : 'Refresh'}
        </button>
      </PageHeader>
      <p class="muted small">
        Certificates Traefik reports (<code>proxy.metrics_url</code>) and its ACME store holds (<code>proxy.acme_path</code>), soonest expiry first. A notification goes out at 14, 3 and 0 days left.
      </p>
      {unconfigured ? (
        <div class="notice" id="certificates-not-configured">
          {(report.error as ApiError).message}
        </div>
      ) : (
        <ErrorBox error={error ?? report.error} />
      )}
      <Loading when={report.loading && !data} />
      {data && (
        <p class="muted small" id="certificates-checked">
          {data.checked_at ? <>Checked {when(data.checked_at)}</> : 'Not checked yet'}
          {data.sources.map((s) => (
            <span key={s.source} data-source={s.source}>
              {' · '}
              {s.source === 'metrics' ? 'Traefik metrics' : 'acme.json'} <code>{s.url_or_path}</code>{' '}
              <Badge tone={s.ok ? 'ok' : 'bad'}>{s.ok ? 'ok' : 'failed'}</Badge>
              {s.error && <span class="field-error"> {s.error}</span>}
            </span>
          ))}
        </p>
      )}
      {data && data.certificates.length === 0 && <Empty>No certificates reported.</Empty>}
      {data && data.certificates.length > 0 && (
        <DataTable<Certificate>
          rows={data.certificates}
          rowKey={(c) => c.cn}
          rowProps={(c) => ({ 'data-certificate': c.cn, 'data-tone': expiryTone(c.days_left) })}
          columns={[
            {
              title: 'Certificate',
              cell: (c) => (
                <>
                  {c.cn}
                  {(c.sans ?? c.domains ?? []).filter((name) => name !== c.cn).length > 0 && (
                    <div class="muted small">{(c.sans ?? c.domains ?? []).filter((name) => name !== c.cn).join(', ')}</div>
                  )}
                </>
              ),
            },
            { title: 'Days left', cell: (c) => <Badge tone={expiryTone(c.days_left)}>{daysText(c.days_left)}</Badge> },
            { title: 'Expires', cell: (c) => when(c.not_after) },
            { title: 'Source', cell: (c) => (c.source === 'acme' ? `acme.json${c.resolver ? ` (${c.resolver})` : ''}` : 'Traefik metrics') },
          ]}
        />
      )}
    </>
  );
}

/** No metrics URL and no acme.json path is a state of the install (nothing to check), not a failure of this screen. */
const notConfigured = (error: unknown): boolean => error instanceof ApiError && error.id === 'not_configured';
