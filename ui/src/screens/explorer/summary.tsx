/**
 * The explorer's head: Traefik's own overview (totals, warnings and errors per kind of the chosen
 * protocol) and its entry points. Both are Traefik's answers passed through unchanged, so the
 * OpenAPI document types them as open objects; the fields read here are Traefik's documented ones.
 */
import { Fragment } from 'preact';
import { api, unwrap } from '../../api/client';
import { ErrorBox } from '../../components/ui';
import { useAsync } from '../../lib/use-async';

type Counts = { total?: number; warnings?: number; errors?: number };
type Overview = Partial<Record<string, Partial<Record<string, Counts>>>>;
type EntryPoint = { name?: string; address?: string };

const KINDS = ['routers', 'services', 'middlewares'] as const;

function describe(kind: string, counts: Counts | undefined): string {
  const problems = [counts?.errors ? `${counts.errors} with errors` : '', counts?.warnings ? `${counts.warnings} with warnings` : ''].filter(Boolean);
  return `${counts?.total ?? 0} ${kind}${problems.length ? ` (${problems.join(', ')})` : ''}`;
}

export function ExplorerSummary({ protocol }: { protocol: string }) {
  const overview = useAsync(async () => (await unwrap(api.GET('/api/proxy/overview'))) as Overview, []);
  const entryPoints = useAsync(async () => (await unwrap(api.GET('/api/proxy/entrypoints'))) as EntryPoint[], []);
  const counts = overview.data?.[protocol];
  return (
    <section class="card small" id="explorer-summary">
      <ErrorBox error={overview.error} title="Traefik overview" />
      <ErrorBox error={entryPoints.error} title="Traefik entry points" />
      {overview.data && (
        <div data-overview={protocol}>
          <strong>{protocol.toUpperCase()}</strong>: {KINDS.map((kind) => describe(kind, counts?.[kind])).join(' · ')}
        </div>
      )}
      {entryPoints.data && (
        <div id="entry-points">
          <strong>Entry points</strong>:{' '}
          {entryPoints.data.map((ep, index) => (
            <Fragment key={ep.name ?? index}>
              {index > 0 && ' · '}
              <span data-entry-point={ep.name}>
                {ep.name} <code>{ep.address}</code>
              </span>
            </Fragment>
          ))}
        </div>
      )}
    </section>
  );
}
