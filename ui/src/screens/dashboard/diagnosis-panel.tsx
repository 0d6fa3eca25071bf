/**
 * The dashboard's Diagnosis (API.md §4.19): each Traefik instance with the state of the document it
 * runs, and the findings, worst first, with their fix and links to what they concern. Follows the
 * `diagnosis` and `live` events, so a finding appears and clears without a reload.
 */
import { loadDiagnosis, type Finding } from '../../api/live';
import { Badge, ErrorBox, Loading, when } from '../../components/ui';
import { DataTable } from '../../components/data-table';
import { LiveStateBadge } from '../../components/live-badge';
import { useAsync } from '../../lib/use-async';
import { useLiveReload } from '../../lib/events';

const SEVERITIES: Finding['severity'][] = ['error', 'warning', 'info'];
const SEVERITY_TONE = { error: 'bad', warning: 'warn', info: 'neutral' } as const;

/** A middleware Traefik names `<id>@http` is one of ours (its page exists); others are shown as named. */
function MiddlewareRef({ name }: { name: string }) {
  const ours = /^(.+)@http$/.exec(name);
  return ours ? <a href={`/middlewares/${encodeURIComponent(ours[1])}`}>{name}</a> : <code>{name}</code>;
}

/** The plugin keys a plugins_disabled finding's fix tells to vendor (`POST /api/plugins/<key>/vendor`). */
function pluginsToVendor(finding: Finding): string[] {
  if (finding.kind !== 'plugins_disabled') return [];
  return [...finding.fix.matchAll(/POST \/api\/plugins\/([^/\s]+)\/vendor/g)].map((match) => decodeURIComponent(match[1]));
}

function FindingItem({ finding }: { finding: Finding }) {
  const vendor = pluginsToVendor(finding);
  return (
    <li class="finding card" data-finding={finding.id} data-kind={finding.kind} data-severity={finding.severity}>
      <div>
        <Badge tone={SEVERITY_TONE[finding.severity]}>{finding.severity}</Badge> <code class="small">{finding.kind}</code> <span class="finding-message">{finding.message}</span>
      </div>
      <div class="finding-fix">
        <strong>Fix:</strong> {finding.fix}
      </div>
      {vendor.length > 0 && (
        <div class="small">
          Vendor on the plugins screen:{' '}
          {vendor.map((key, index) => (
            <span key={key}>
              {index > 0 && ', '}
              <a href={`/plugins?vendor=${encodeURIComponent(key)}`} data-finding-vendor={key}>
                {key}
              </a>
            </span>
          ))}
        </div>
      )}
      {finding.resources.length > 0 && (
        <div class="small">
          Resources:{' '}
          {finding.resources.map((id, index) => (
            <span key={id}>
              {index > 0 && ', '}
              <a href={`/resources/${encodeURIComponent(id)}`} data-finding-resource={id}>
                {id}
              </a>
            </span>
          ))}
        </div>
      )}
      {finding.middlewares.length > 0 && (
        <div class="small">
          Middlewares:{' '}
          {finding.middlewares.map((name, index) => (
            <span key={name}>
              {index > 0 && ', '}
              <MiddlewareRef name={name} />
            </span>
          ))}
        </div>
      )}
    </li>
  );
}

export function DiagnosisPanel() {
  const diagnosis = useAsync(loadDiagnosis);
  // one check raises or clears many findings and states at once: the burst coalesces into one reload
  useLiveReload((e) => e.type === 'diagnosis' || e.type === 'live', diagnosis.reload);
  const d = diagnosis.data;
  return (
    <section id="diagnosis" aria-labelledby="diagnosis-title">
      <h2 id="diagnosis-title">Diagnosis</h2>
      <p class="muted small">What each Traefik instance really runs, compared with the documents we serve.{d?.checked_at ? ` Last check ${when(d.checked_at)}.` : ''}</p>
      <ErrorBox error={diagnosis.error} title="Diagnosis" />
      <Loading when={diagnosis.loading && !d} />
      {d && d.instances.length === 0 && (
        <div class="card" data-diagnosis-empty="no-instances">
          {d.checked_at ? 'No Traefik instance is checked.' : 'No Traefik instance has been checked yet.'} Every data source of type <code>traefik</code> is checked, whichever source is active: add one with the URL of
          Traefik's API (e.g. <code>http://traefik:8080</code>, with Traefik's <code>api</code> enabled) on <a href="/datasources">Data sources</a>.
        </div>
      )}
      {d && d.instances.length > 0 && (
        <DataTable
          id="diagnosis-instances"
          rows={d.instances}
          rowKey={(instance) => instance.source}
          rowProps={(instance) => ({ 'data-instance': instance.source, 'data-document': instance.document })}
          columns={[
            { title: 'Instance', cell: (instance) => instance.source },
            {
              title: 'Reachable',
              // before the first check (a few seconds after start) the API says reachable: false: nothing was read yet
              cell: (instance) =>
                d.checked_at === null ? <Badge tone="neutral">not checked yet</Badge> : <Badge tone={instance.reachable ? 'ok' : 'bad'}>{instance.reachable ? 'yes' : 'no'}</Badge>,
            },
            { title: 'Version', cell: (instance) => instance.version ?? <span class="muted">unknown</span> },
            {
              title: 'Document',
              cell: (instance) => (
                <span title="current: runs our latest document; behind: has not taken it; unknown: not read">
                  <LiveStateBadge state={instance.document} /> {instance.since && <span class="muted small">since {when(instance.since)}</span>}
                </span>
              ),
            },
          ]}
        />
      )}
      {d && d.instances.length > 0 && d.checked_at === null && (
        <p class="muted" data-diagnosis-empty="not-checked">
          Not checked yet: the first check runs shortly after start and after each new document.
        </p>
      )}
      {d && d.instances.length > 0 && d.checked_at !== null && d.findings.length === 0 && (
        <p class="success" data-diagnosis-empty="no-findings">
          Traefik runs what we serve: no findings.
        </p>
      )}
      {d &&
        SEVERITIES.map((severity) => {
          const findings = d.findings.filter((finding) => finding.severity === severity);
          if (findings.length === 0) return null;
          return (
            <div key={severity} data-severity-group={severity}>
              <h3>
                {severity === 'error' ? 'Errors' : severity === 'warning' ? 'Warnings' : 'Information'} ({findings.length})
              </h3>
              <ul class="plain findings">
                {findings.map((finding) => (
                  <FindingItem key={finding.id} finding={finding} />
                ))}
              </ul>
            </div>
          );
        })}
    </section>
  );
}
