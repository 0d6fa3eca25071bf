/**
 * Form fields for the common middleware types; everything else (and every field) is reachable in
 * the YAML/JSON editor. Each field shows the server's validation message for its JSON Pointer.
 */
import { Field, FieldError } from '../../components/ui';

export const MIDDLEWARE_TYPES = [
  'addPrefix', 'basicAuth', 'buffering', 'chain', 'circuitBreaker', 'compress', 'contentType', 'digestAuth', 'errors', 'forwardAuth', 'grpcWeb', 'headers',
  'ipAllowList', 'ipWhiteList', 'inFlightReq', 'passTLSClientCert', 'plugin', 'rateLimit', 'redirectRegex', 'redirectScheme', 'replacePath', 'replacePathRegex',
  'retry', 'stripPrefix', 'stripPrefixRegex',
] as const;

type Config = Record<string, unknown>;
type FieldKind = 'text' | 'number' | 'bool' | 'lines';
/** Per type: [config key, label, kind]. */
const FORMS: Record<string, [string, string, FieldKind][]> = {
  forwardAuth: [['address', 'Address', 'text'], ['trustForwardHeader', 'Trust X-Forwarded-* headers', 'bool'], ['authResponseHeaders', 'Auth response headers (one per line)', 'lines']],
  basicAuth: [['users', 'Users (htpasswd lines)', 'lines'], ['realm', 'Realm', 'text'], ['removeHeader', 'Remove the Authorization header', 'bool']],
  rateLimit: [['average', 'Average (requests per period)', 'number'], ['burst', 'Burst', 'number'], ['period', 'Period (Go duration, e.g. 1s)', 'text']],
  ipAllowList: [['sourceRange', 'Allowed ranges (one CIDR per line)', 'lines']],
  redirectScheme: [['scheme', 'Scheme', 'text'], ['permanent', 'Permanent', 'bool'], ['port', 'Port', 'text']],
  stripPrefix: [['prefixes', 'Prefixes (one per line)', 'lines']],
  addPrefix: [['prefix', 'Prefix', 'text']],
  replacePath: [['path', 'Path', 'text']],
  chain: [['middlewares', 'Middlewares (ids, one per line)', 'lines']],
  retry: [['attempts', 'Attempts', 'number'], ['initialInterval', 'Initial interval (Go duration)', 'text']],
  inFlightReq: [['amount', 'Amount', 'number']],
  compress: [['minResponseBodyBytes', 'Minimum body bytes', 'number']],
};

export function hasForm(type: string): boolean {
  return type in FORMS;
}

export function ConfigForm({ type, config, onChange, error, base = '/config' }: { type: string; config: Config; onChange: (config: Config) => void; error: unknown; base?: string }) {
  const fields = FORMS[type] ?? [];
  const set = (key: string, value: unknown) => {
    const next = { ...config };
    if (value === undefined || value === '') delete next[key];
    else next[key] = value;
    onChange(next);
  };
  return (
    <div class="config-form">
      {fields.map(([key, label, kind]) => {
        const value = config[key];
        const pointer = `${base}/${key}`;
        if (kind === 'bool')
          return (
            <div key={key}>
              <label class="check">
                <input type="checkbox" name={key} checked={value === true} onChange={(e) => set(key, e.currentTarget.checked ? true : undefined)} /> {label}
              </label>
              <FieldError error={error} pointer={pointer} />
            </div>
          );
        return (
          <Field label={label} key={key}>
            {kind === 'lines' ? (
              <textarea
                name={key}
                rows={3}
                class="code"
                value={Array.isArray(value) ? value.join('\n') : ''}
                onInput={(e) => set(key, e.currentTarget.value.split('\n').map((s) => s.trim()).filter(Boolean))}
              />
            ) : (
              <input
                name={key}
                type={kind === 'number' ? 'number' : 'text'}
                value={value == null ? '' : String(value)}
                onInput={(e) => set(key, kind === 'number' ? (e.currentTarget.value === '' ? undefined : Number(e.currentTarget.value)) : e.currentTarget.value)}
              />
            )}
            <FieldError error={error} pointer={pointer} />
          </Field>
        );
      })}
    </div>
  );
}
