/**
 * Security (CrowdSec): check an IP (decisions, alerts, allow-lists), unban it; our public IP and the
 * caller's; the decisions table (filter, add, delete) and our allowlist (API.md §4.23), each action
 * saying when Traefik's bouncer feels it.
 */
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import type { IpSecurity } from '../api/types';
import { Badge, ErrorBox, Field, FieldError, PageHeader, when } from '../components/ui';
import { canWrite, useSession } from '../lib/session';
import { AllowlistPanel } from './security/allowlist-panel';
import { DecisionsPanel } from './security/decisions-panel';
import { effectiveText } from './security/effective';

export default function Security() {
  const { session } = useSession();
  const [ip, setIp] = useState('');
  const [report, setReport] = useState<IpSecurity | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [publicIp, setPublicIp] = useState<{ ip: string; caller_ip: string; source: string } | null>(null);
  // any action of a panel may change the other's rows (an allowlist entry removes decisions)
  const [changes, setChanges] = useState(0);
  const showNotice = (text: string) => {
    setError(null);
    setNotice(text);
    setChanges((n) => n + 1);
  };
  const check = async (address = ip) => {
    setError(null);
    setNotice(null);
    try {
      setReport(await unwrap(api.GET('/api/ip/security/{ip}', { params: { path: { ip: address } } })));
    } catch (err) {
      setReport(null);
      setError(err);
    }
  };
  return (
    <>
      <PageHeader title="Security">
        <button
          type="button"
          onClick={async () => {
            setError(null);
            try {
              setPublicIp(await unwrap(api.GET('/api/ip/public')));
            } catch (err) {
              setError(err);
            }
          }}
        >
          Show public IP
        </button>
      </PageHeader>
      {publicIp && (
        <p>
          Public IP <code>{publicIp.ip}</code> (from {publicIp.source}); you are <code>{publicIp.caller_ip}</code>{' '}
          <button
            type="button"
            class="link-button"
            onClick={() => {
              setIp(publicIp.caller_ip);
              void check(publicIp.caller_ip);
            }}
          >
            check mine
          </button>
        </p>
      )}
      <form
        class="card form-row"
        id="ip-check"
        onSubmit={(event) => {
          event.preventDefault();
          void check();
        }}
      >
        <Field label="IP address">
          <input
            name="ip"
            value={ip}
            required
            placeholder="203.0.113.7"
            onInput={(e) => setIp(e.currentTarget.value.trim())}
          />
          <FieldError error={error} pointer="/params/ip" />
        </Field>
        <div>
          <button type="submit" class="primary">
            Check
          </button>
        </div>
      </form>
      <ErrorBox error={error} />
      {notice && (
        <div class="success" id="security-notice" role="status">
          {notice}
        </div>
      )}
      {report && (
        <section class="card" id="ip-report">
          <h2>
            {report.ip} {report.blocked ? <Badge tone="bad">blocked</Badge> : <Badge tone="ok">not blocked</Badge>}
          </h2>
          {report.warnings.map((w) => (
            <div class="notice" key={w}>
              {w}
            </div>
          ))}
          {report.allowlisted_by.length > 0 && <p>Allow-listed by middlewares: {report.allowlisted_by.join(', ')}</p>}
          <h3>Decisions ({report.decisions.length})</h3>
          <ul>
            {report.decisions.map((d) => (
              <li key={d.id}>
                {d.type} {d.scope}:{d.value} by {d.origin} ({d.scenario}) until {when(d.until)}
              </li>
            ))}
          </ul>
          <h3>Alerts ({report.alerts.length})</h3>
          <ul>
            {report.alerts.map((a) => (
              <li key={a.id}>
                {when(a.created_at)} {a.scenario}: {a.message}
              </li>
            ))}
          </ul>
          {report.blocked && canWrite(session) && (
            <button
              type="button"
              class="danger"
              onClick={async () => {
                try {
                  const result = await unwrap(api.POST('/api/ip/unban', { body: { ip: report.ip } }));
                  await check(report.ip);
                  showNotice(
                    `Deleted ${result.deleted} decision(s)${result.still_blocked ? '; still blocked by another decision (e.g. a range)' : ''}. ${effectiveText(result.effective_within_s, 'stops')}`,
                  );
                } catch (err) {
                  setError(err);
                }
              }}
            >
              Unban
            </button>
          )}
          <p class="muted small">checked {when(report.checked_at)}</p>
        </section>
      )}
      <DecisionsPanel writable={canWrite(session)} onNotice={showNotice} changes={changes} />
      <AllowlistPanel writable={canWrite(session)} onNotice={showNotice} changes={changes} />
    </>
  );
}
