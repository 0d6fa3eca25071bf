/** The rules for data source input (API.md §4.5): URL checks, merge-on-PUT, defaults of hand-edited entries. */
import { validationError, type ErrorDetail } from '../../core/errors/app-error.ts';
import {
  DEFAULT_POLL_INTERVAL_S,
  DEFAULT_TIMEOUT_MS,
  PASSWORD_MASK,
  type DataSourcesFile,
  type DataSourceWriteBody,
  type StoredSource,
} from './schemas.ts';

/** Fills defaults and drops trailing slashes, so hand-edited and API-written entries look alike. */
export function normalizeFile(file: DataSourcesFile): DataSourcesFile {
  const sources: Record<string, StoredSource> = {};
  for (const [name, entry] of Object.entries(file.sources)) {
    sources[name] = {
      ...entry,
      url: entry.url.replace(/\/+$/, ''),
      skip_tls_verify: entry.skip_tls_verify ?? false,
      basic_auth: entry.basic_auth ?? null,
      poll_interval_s: entry.poll_interval_s ?? DEFAULT_POLL_INTERVAL_S,
      timeout_ms: entry.timeout_ms ?? DEFAULT_TIMEOUT_MS,
    };
  }
  return { active: file.active, sources };
}

/** Checks a URL against API.md §4.5; returns it without trailing slashes, or the problem. */
export function checkUrl(raw: string): { url: string } | { problem: string } {
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  if (/[\s\u0000-\u001f\u007f]/.test(raw)) return { problem: 'must not contain blanks or control characters' };
  if (!/^https?:\/\/[^/]/i.test(raw) || !URL.canParse(raw)) return { problem: 'must be an absolute http or https URL' };
  if (raw.includes('?')) return { problem: 'must not contain a query' };
  if (raw.includes('#')) return { problem: 'must not contain a fragment' };
  const parsed = new URL(raw);
  // credentials in the URL would be shown in every response: they belong in basic_auth
  if (parsed.username || parsed.password) return { problem: 'must not contain credentials; use basic_auth' };
  return { url: raw.replace(/\/+$/, '') };
}

/** Settings after a PUT or test body is merged over the stored source (timestamps not included). */
export function mergeSource(
  stored: StoredSource | undefined,
  body: DataSourceWriteBody,
): Omit<StoredSource, 'created_at' | 'updated_at'> {
  const details: ErrorDetail[] = [];
  const missing = (path: string, why: string) => details.push({ path, message: `is required ${why}` });
  const type = body.type ?? stored?.type;
  if (!type) missing('/type', 'when creating a data source');
  let url = stored?.url;
  if (body.url !== undefined) {
    const checked = checkUrl(body.url);
    if ('problem' in checked) details.push({ path: '/url', message: checked.problem });
    else url = checked.url;
  } else if (!url) missing('/url', 'when creating a data source');

  // `basic_auth` wins over the alias of the Go project (API.md §7) when both are sent
  const aliasUsed = body.basic_auth === undefined && body.basicAuth !== undefined;
  const auth = aliasUsed ? body.basicAuth : body.basic_auth;
  const pointer = aliasUsed ? '/basicAuth' : '/basic_auth';
  let basicAuth = stored?.basic_auth ?? null;
  if (auth === null) basicAuth = null;
  else if (auth !== undefined) {
    const username = auth.username ?? stored?.basic_auth?.username;
    const keep = auth.password === undefined || auth.password === PASSWORD_MASK;
    const password = keep ? stored?.basic_auth?.password : auth.password;
    if (username === undefined) missing(`${pointer}/username`, 'when no credentials are stored');
    // eslint-disable-next-line no-control-regex -- control characters are what it looks for
    else if (/[:\u0000-\u001f\u007f]/.test(username))
      details.push({ path: `${pointer}/username`, message: 'must not contain ":" or control characters' });
    if (password === undefined) missing(`${pointer}/password`, 'when no password is stored');
    if (username !== undefined && password !== undefined) basicAuth = { username, password };
  }
  if (details.length > 0) throw validationError(details);
  return {
    type: type!,
    url: url!,
    skip_tls_verify: body.skip_tls_verify ?? stored?.skip_tls_verify ?? false,
    basic_auth: basicAuth,
    poll_interval_s: body.poll_interval_s ?? stored?.poll_interval_s ?? DEFAULT_POLL_INTERVAL_S,
    timeout_ms: body.timeout_ms ?? stored?.timeout_ms ?? DEFAULT_TIMEOUT_MS,
  };
}
