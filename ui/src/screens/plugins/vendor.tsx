/**
 * Vendoring on the plugins screen (API.md §4.20): a remote plugin Traefik downloads at every start
 * is copied into its plugins-local directory (downloaded by the server, or an uploaded zip) so
 * Traefik starts without the network; a vendored one can go back to the registry. Each change needs
 * a Traefik restart, which the screen says.
 */
import { api, unwrap } from '../../api/client';
import { when } from '../../components/ui';

type Plugin = Awaited<ReturnType<typeof listPlugins>>[number];
type Vendored = Awaited<ReturnType<typeof vendorPlugin>>;

const listPlugins = () => unwrap(api.GET('/api/plugins'));

/** POST /api/plugins/:key/vendor: without a file the server downloads the plugin from the registry. */
export function vendorPlugin(key: string, zip?: File) {
  const params = { path: { key } };
  if (!zip) return unwrap(api.POST('/api/plugins/{key}/vendor', { params }));
  return unwrap(
    api.POST('/api/plugins/{key}/vendor', {
      params,
      // the zip goes as is (application/zip, ≤ 20 MiB); the route has no JSON body to type
      body: zip as never,
      bodySerializer: (body: unknown) => body as BodyInit,
      headers: { 'Content-Type': 'application/zip' },
    }),
  );
}

/** DELETE /api/plugins/:key/vendor. */
export function unvendorPlugin(key: string) {
  return unwrap(api.DELETE('/api/plugins/{key}/vendor', { params: { path: { key } } }));
}

/** What the notice says once a plugin is vendored: version, checksum, restart. */
export function vendoredNotice(result: Vendored): string {
  return `Vendored ${result.key} ${result.version} (sha256 ${result.sha256}) into ${result.path}. Restart Traefik required: it loads plugins only at start.`;
}

/** The vendored copy of a plugin row: version, sha256, when; "restart Traefik required" until Traefik has it loaded. */
export function VendoredInfo({ plugin }: { plugin: Plugin }) {
  const vendored = plugin.vendored;
  if (!vendored) return null;
  return (
    <div class="small" data-vendored={plugin.key}>
      vendored {vendored.version} · sha256{' '}
      <code title={vendored.sha256} data-sha256={vendored.sha256}>
        {vendored.sha256.slice(0, 12)}…
      </code>{' '}
      · {when(vendored.at)}
      {plugin.status !== 'loaded' && (
        <>
          {' '}
          · <strong data-restart-required>restart Traefik required</strong>
        </>
      )}
    </div>
  );
}

/**
 * The row's vendoring actions: "Vendor (work offline)" and "Upload zip" for a remote plugin with a
 * version, "Un-vendor" for a vendored one. `act` runs the call and shows its notice or error.
 */
export function VendorActions({
  plugin,
  act,
}: {
  plugin: Plugin;
  act: (action: () => Promise<unknown>, done: string | ((result: any) => string)) => void;
}) {
  if (plugin.vendored) {
    return (
      <button
        type="button"
        onClick={() =>
          confirm(`Un-vendor ${plugin.key}? Traefik will download it again at every start.`) &&
          act(
            () => unvendorPlugin(plugin.key),
            `Un-vendored ${plugin.key}: back to experimental.plugins at ${plugin.vendored!.version}. Restart Traefik required.`,
          )
        }
      >
        Un-vendor
      </button>
    );
  }
  if (plugin.local || !plugin.version) return null;
  return (
    <>
      <button
        type="button"
        title="Copy the plugin into Traefik's plugins-local directory, so Traefik starts without downloading it"
        onClick={() => act(() => vendorPlugin(plugin.key), vendoredNotice)}
      >
        Vendor (work offline)
      </button>{' '}
      <label
        class="button"
        title="Vendor from a zip of the plugin (as the registry serves it), when this server cannot reach the registry either"
      >
        Upload zip
        <input
          type="file"
          accept=".zip,application/zip"
          data-vendor-upload={plugin.key}
          style={{ display: 'none' }}
          onChange={(event) => {
            const file = event.currentTarget.files?.[0];
            event.currentTarget.value = '';
            if (file) act(() => vendorPlugin(plugin.key, file), vendoredNotice);
          }}
        />
      </label>
    </>
  );
}
