/** The service a resource's router uses: its upstream one, or one of ours (manual, template or discovered, HTTP only). */
import { useState } from 'preact/hooks';
import { api, unwrap } from '../../api/client';
import type { Resource } from '../../api/types';
import { ErrorBox, Field, Json } from '../../components/ui';
import { useAsync } from '../../lib/use-async';

export function ServiceTab({ resource, writable, onChange }: { resource: Resource; writable: boolean; onChange: (updated?: Resource) => void }) {
  const id = resource.id;
  const services = useAsync(() => unwrap(api.GET('/api/services', { params: { query: { protocol: 'http' } } })), []);
  const [choice, setChoice] = useState(resource.service_id ?? '');
  const [error, setError] = useState<unknown>(null);
  const current = services.data?.find((s) => s.id === resource.service_id);
  const run = async (action: () => Promise<Resource | void>) => {
    setError(null);
    try {
      onChange((await action()) ?? undefined);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section>
      <ErrorBox error={error} />
      <ErrorBox error={services.error} />
      <p>
        {resource.service_id ? (
          <>
            Assigned: <a href={`/services/${encodeURIComponent(resource.service_id)}`}>{resource.service_id}</a>
          </>
        ) : (
          <>
            Uses its upstream service <code>{resource.upstream_service}</code>.
          </>
        )}
      </p>
      {current && <Json value={current.config} />}
      {writable && (
        <form
          class="card"
          onSubmit={(event) => {
            event.preventDefault();
            void run(() => unwrap(api.POST('/api/resources/{id}/service', { params: { path: { id } }, body: { service_id: choice } })));
          }}
        >
          <Field label="Service">
            <select name="service_id" value={choice} onChange={(e) => setChoice(e.currentTarget.value)} required>
              <option value="">Choose…</option>
              {(services.data ?? []).map((s) => (
                <option key={s.id} value={s.id}>
                  {s.name} ({s.source})
                </option>
              ))}
            </select>
          </Field>
          <div class="actions">
            <button type="submit" class="primary">
              Assign service
            </button>
            {resource.service_id && (
              <button type="button" onClick={() => run(() => unwrap(api.DELETE('/api/resources/{id}/service', { params: { path: { id } } })))}>
                Back to the upstream service
              </button>
            )}
          </div>
        </form>
      )}
    </section>
  );
}
