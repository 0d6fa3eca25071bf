/** Dashboard: upstream health, provider status (ETag, last generation), invalid files with file:line, what Traefik runs (diagnosis), counts. */
import { api, unwrap } from '../api/client';
import type { ConfigStatus, Health, HealthCheck } from '../api/types';
import { ErrorBox, Loading, PageHeader, StatusBadge, when } from '../components/ui';
import { useAsync } from '../lib/use-async';
import { useLiveReload } from '../lib/events';
import { useSession, canWrite } from '../lib/session';
import { useState } from 'preact/hooks';
import { DiagnosisPanel } from './dashboard/diagnosis-panel';

/** Health and config status answer 503 with their full body when something fails: show it, not just the error. */
async function loadHealth(): Promise<Health> {
  const result = await api.GET('/api/health', { params: { query: { deep: 'true' } } });
  if (result.data) return result.data;
  if (result.response.status === 503 && result.error) return result.error as unknown as Health;
  return unwrap(Promise.resolve(result));
}

async function loadStatus(): Promise<ConfigStatus> {
  const result = await api.GET('/api/proxy-config/status');
  if (result.data) return result.data;
  if (result.response.status === 503 && result.error) return result.error as unknown as ConfigStatus;
  return unwrap(Promise.resolve(result));
}

async function loadTraefik(): Promise<{ ok: boolean; version: string | null; error: string | null }> {
  const result = await api.GET('/api/proxy/version');
  if (result.data) return { ok: true, version: result.data.version, error: null };
  return { ok: false, version: null, error: (result.error as { message?: string } | undefined)?.message ?? `HTTP ${result.response.status}` };
}

/** Counts from X-Total-Count with page_size=1: the dashboard never downloads whole lists. */
async function total(call: Promise<{ response: Response; error?: unknown }>): Promise<number> {
  const result = await call;
  if (!result.response.ok) await unwrap(Promise.resolve(result as { response: Response; error?: unknown; data?: unknown }));
  return Number(result.response.headers.get('x-total-count') ?? 0);
}

async function loadCounts() {
  const one = { page_size: 1 } as const;
  const [resources, activeResources, middlewares, services, discovered] = await Promise.all([
    total(api.GET('/api/resources', { params: { query: one } })),
    total(api.GET('/api/resources', { params: { query: { ...one, status: 'active' } } })),
    total(api.GET('/api/middlewares', { params: { query: one } })),
    total(api.GET('/api/services', { params: { query: one } })),
    total(api.GET('/api/services', { params: { query: { ...one, source: 'discovered' } } })),
  ]);
  return { resources, activeResources, middlewares, services: services - discovered, discovered };
}

function CheckCard({ title, check, extra }: { title: string; check: HealthCheck | undefined; extra?: string | null }) {
  return (
    <div class="card" data-check={title}>
      <div class="muted small">{title}</div>
      <div>
        <StatusBadge status={check?.status} /> {check && check.status !== 'skipped' && <span class="muted small">{check.latency_ms} ms</span>}
      </div>
      {check?.error && <div class="field-error">{check.error}</div>}
      {check?.status === 'skipped' && <div class="muted small">not configured</div>}
      {extra && <div class="muted small">{extra}</div>}
    </div>
  );
}

/**
 * The upstream's last error (kept by the API after a later success, docs/API.md): in red while the
 * source still fails, shown as past, with its time, once a later sync succeeded.
 */
function UpstreamError({ upstream, stale }: { upstream: ConfigStatus['upstream']; stale: boolean }) {
  if (!upstream.last_error) return null;
  // Date.parse gives NaN for null: an error without a later success stays current
  const past = !stale && Date.parse(upstream.last_ok_at ?? '') > Date.parse(upstream.last_error_at ?? '');
  if (past)
    return (
      <div class="muted small" data-upstream-error="past">
        recovered; last error {when(upstream.last_error_at)}: {upstream.last_error}
      </div>
    );
  return (
    <div class="field-error" data-upstream-error="current">
      {upstream.last_error} ({when(upstream.last_error_at)})
    </div>
  );
}

export default function Dashboard() {
  const { session } = useSession();
  const health = useAsync(loadHealth);
  const status = useAsync(loadStatus);
  const traefik = useAsync(loadTraefik);
  const counts = useAsync(loadCounts);
  const [regenerating, setRegenerating] = useState(false);
  const [regenError, setRegenError] = useState<unknown>(null);
  useLiveReload((e) => e.type === 'provider' || e.type === 'invalid_file' || e.type === 'upstream', status.reload);
  useLiveReload((e) => e.type === 'upstream', health.reload);
  useLiveReload((e) => e.type === 'object', counts.reload);

  const checks = health.data && 'checks' in health.data ? (health.data.checks as Record<string, HealthCheck> | undefined) : undefined;
  const s = status.data;
  const invalidate = async () => {
    setRegenerating(true);
    setRegenError(null);
    try {
      await unwrap(api.POST('/api/proxy-config/invalidate'));
      status.reload();
    } catch (err) {
      setRegenError(err);
    } finally {
      setRegenerating(false);
    }
  };

  return (
    <>
      <PageHeader title="Dashboard">
        {canWrite(session) && (
          <button type="button" onClick={invalidate} disabled={regenerating}>
            {regenerating ? 'Fetching…' : s?.mode === 'none' ? 'Regenerate' : 'Fetch upstream & regenerate'}
          </button>
        )}
      </PageHeader>
      <ErrorBox error={health.error} title="Health" />
      <ErrorBox error={regenError} title="Regenerate" />
      <h2>Health</h2>
      <div class="grid">
        <CheckCard title="Pangolin / data source" check={checks?.datasource} extra={s?.upstream.url} />
        <CheckCard title="Traefik API" check={traefik.data ? { status: traefik.data.ok ? 'ok' : 'fail', latency_ms: 0, error: traefik.data.error } : undefined} extra={traefik.data?.version ? `version ${traefik.data.version}` : null} />
        <CheckCard title="Docker" check={checks?.docker} />
        <CheckCard title="CrowdSec" check={checks?.crowdsec} />
        <CheckCard title="Data dir" check={checks?.data_dir} />
      </div>
      <h2>Provider</h2>
      <ErrorBox error={status.error} title="Config status" />
      <Loading when={status.loading && !s} />
      {s && (
        <div class="card" id="provider-status">
          <dl class="kv">
            <dt>Status</dt>
            <dd>
              <StatusBadge status={s.status} /> {s.stale && <StatusBadge status="stale" />}
            </dd>
            <dt>Mode</dt>
            <dd>{s.mode}</dd>
            <dt>ETag</dt>
            <dd>
              <code data-testid="provider-etag">{s.etag ?? '–'}</code>
            </dd>
            <dt>Last generation</dt>
            <dd>{when(s.generated_at)}</dd>
            <dt>Upstream</dt>
            {s.mode === 'none' ? (
              // an error of the source active before the switch is not this mode's (docs/API.md §4.24)
              <dd data-upstream="none">none: nothing is polled (data source mode none)</dd>
            ) : (
              <dd>
                {s.upstream.source ?? '–'} ({s.upstream.type ?? '–'}) last ok {when(s.upstream.last_ok_at)}
                <UpstreamError upstream={s.upstream} stale={s.stale} />
              </dd>
            )}
            <dt>Generated</dt>
            <dd>
              {s.counts.routers} routers, {s.counts.services} services, {s.counts.middlewares} middlewares, {s.counts.patched_routers} patched routers
            </dd>
          </dl>
        </div>
      )}
      {s && s.invalid_files.length > 0 && (
        <div class="card" id="invalid-files">
          <h2>Invalid files ({s.invalid_files.length})</h2>
          <p class="muted small">The previous valid version of each object stays in effect until the file is fixed.</p>
          <ul>
            {s.invalid_files.map((file) => (
              <li key={file.path} data-invalid-file={file.path}>
                <code>
                  {file.path}
                  {file.line != null ? `:${file.line}` : ''}
                  {file.column != null ? `:${file.column}` : ''}
                </code>{' '}
                {file.message}
              </li>
            ))}
          </ul>
        </div>
      )}
      {s && (s.conflicts.length > 0 || s.dangling_references.length > 0 || s.schema_warnings.length > 0) && (
        <div class="card">
          <h2>Findings</h2>
          <ul>
            {s.conflicts.map((c) => (
              <li key={c.kind + c.key}>
                conflict <code>{c.key}</code>: {c.message}
              </li>
            ))}
            {s.dangling_references.map((d) => (
              <li key={d.from + d.ref}>
                dangling reference <code>{d.from}</code> → <code>{d.ref}</code>
              </li>
            ))}
            {s.schema_warnings.map((w) => (
              <li key={w.path + w.message}>
                schema warning <code>{w.path}</code>: {w.message}
              </li>
            ))}
          </ul>
        </div>
      )}
      <DiagnosisPanel />
      <h2>Objects</h2>
      <ErrorBox error={counts.error} />
      {counts.data && (
        <div class="grid">
          <a class="card" href="/resources">
            <div class="stat">{counts.data.resources}</div>
            <div class="muted">resources ({counts.data.activeResources} active)</div>
          </a>
          <a class="card" href="/middlewares">
            <div class="stat">{counts.data.middlewares}</div>
            <div class="muted">middlewares</div>
          </a>
          <a class="card" href="/services">
            <div class="stat">{counts.data.services}</div>
            <div class="muted">services ({counts.data.discovered} discovered)</div>
          </a>
        </div>
      )}
    </>
  );
}
