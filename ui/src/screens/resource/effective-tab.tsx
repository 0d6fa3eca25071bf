/** The router exactly as Traefik receives it: the resource's effective fields plus its entry in GET /api/proxy-config. */
import { api, unwrap } from '../../api/client';
import type { Resource } from '../../api/types';
import { ErrorBox, Json, Loading } from '../../components/ui';
import { useAsync } from '../../lib/use-async';
import { useLiveReload } from '../../lib/events';

type Routers = Record<string, unknown>;

export function EffectiveTab({ resource }: { resource: Resource }) {
  const config = useAsync(() => unwrap(api.GET('/api/proxy-config', { parseAs: 'json' })) as Promise<{ http?: { routers?: Routers }; tcp?: { routers?: Routers } }>, [resource.etag]);
  useLiveReload((e) => e.type === 'provider', config.reload);
  const key = resource.router.replace(/@[^@]*$/, '');
  const routers = config.data?.http?.routers ?? {};
  const router = routers[key] ?? routers[resource.id];
  const tcpRouter = config.data?.tcp?.routers?.[`${resource.id}_tcp`];
  return (
    <section id="effective-router">
      <dl class="kv card">
        <dt>Emitted</dt>
        <dd>{resource.emitted ? 'yes: the generated config patches or emits this router' : 'no: Traefik uses the upstream router unchanged'}</dd>
        <dt>Middlewares</dt>
        <dd>
          <code>{resource.effective_middlewares.join(', ') || '–'}</code>
        </dd>
        <dt>Service</dt>
        <dd>
          <code>{resource.effective_service}</code>
        </dd>
      </dl>
      <ErrorBox error={config.error} title="Provider config" />
      <Loading when={config.loading && !config.data} />
      {config.data && (router ? <Json value={router} /> : <p class="muted">The generated config has no router for this resource (Traefik mode emits one only when there are overrides).</p>)}
      {tcpRouter && (
        <>
          <h3>TCP router</h3>
          <Json value={tcpRouter} />
        </>
      )}
    </section>
  );
}
