/** What each Traefik instance runs for this resource (API.md §4.19): its state, version and Traefik's errors verbatim. */
import { LIVE_MEANING } from '../../api/live';
import type { Resource } from '../../api/types';
import { when } from '../../components/ui';
import { DataTable } from '../../components/data-table';
import { LiveStateBadge } from '../../components/live-badge';

export function LiveTab({ resource }: { resource: Resource }) {
  const live = resource.live;
  return (
    <section id="live-in-traefik">
      <dl class="kv card">
        <dt>State</dt>
        <dd>
          <LiveStateBadge state={live.state} /> <span class="muted">{LIVE_MEANING[live.state]}</span>
        </dd>
        <dt>Checked</dt>
        <dd data-checked-at={live.checked_at ?? ''}>{live.checked_at ? when(live.checked_at) : 'not yet'}</dd>
      </dl>
      <DataTable
        rows={live.instances}
        rowKey={(instance) => instance.source}
        rowProps={(instance) => ({ 'data-instance': instance.source, 'data-state': instance.state })}
        empty={
          <>
            No Traefik instance is checked: add a data source of type <code>traefik</code> (its API URL, e.g. <code>http://traefik:8080</code>) on <a href="/datasources">Data sources</a>.
          </>
        }
        columns={[
          { title: 'Instance', cell: (instance) => <a href="/datasources">{instance.source}</a> },
          { title: 'State', cell: (instance) => <LiveStateBadge state={instance.state} /> },
          { title: 'Traefik version', cell: (instance) => instance.traefik_version ?? <span class="muted">unknown</span> },
          {
            title: "Traefik's errors",
            cell: (instance) =>
              instance.errors.length === 0 ? (
                <span class="muted">none</span>
              ) : (
                <ul class="plain">
                  {instance.errors.map((error) => (
                    <li key={error}>
                      <code class="traefik-error">{error}</code>
                    </li>
                  ))}
                </ul>
              ),
          },
        ]}
      />
    </section>
  );
}
