/**
 * The global mtlswhitelist middleware settings (API.md §4.8 MiddlewareConfig): the stored form with
 * defaults filled, and a PUT body turned into it. The old client's forms are accepted: `mtls_*`
 * names, JSON text for objects and arrays, integer seconds for `refresh_interval` (stored `"<n>s"`).
 */
import { validationError } from '../../core/errors/app-error.ts';
import { defaultMiddlewareConfig, type MiddlewareConfig } from '../../model/types.ts';
import { HEADER_NAME } from '../../model/resource-config.ts';
import type { ConfigFileData, MiddlewareConfigInput } from './schemas.ts';
import { pointerToken } from '../../core/json-pointer.ts';

/** `"<n>s"` for integer seconds; Go durations stay as written. */
export const intervalText = (value: string | number): string => (typeof value === 'number' ? `${value}s` : value);

/** The stored settings with every absent field at its default. */
export function middlewareConfigOf(stored: ConfigFileData['middleware']): MiddlewareConfig {
  const defaults = defaultMiddlewareConfig();
  return {
    rules: stored?.rules ?? defaults.rules,
    request_headers: stored?.request_headers ?? defaults.request_headers,
    reject_message: stored?.reject_message ?? defaults.reject_message,
    reject_code: stored?.reject_code ?? defaults.reject_code,
    refresh_interval: intervalText(stored?.refresh_interval ?? defaults.refresh_interval),
    external_data: stored?.external_data ?? defaults.external_data,
  };
}

/** A validated PUT body as stored (full replace: absent or null → default); 422 for bad header names. */
export function middlewareConfigFromBody(body: MiddlewareConfigInput): MiddlewareConfig {
  const bad = Object.keys(body.request_headers ?? {}).filter((name) => !HEADER_NAME.test(name));
  if (bad.length > 0) {
    throw validationError(
      bad.map((name) => ({
        path: `/request_headers/${pointerToken(name)}`,
        message: 'is not a valid header name (RFC 9110 token)',
      })),
    );
  }
  return middlewareConfigOf({
    rules: body.rules ?? undefined,
    request_headers: body.request_headers ?? undefined,
    reject_message: body.reject_message ?? undefined,
    reject_code: body.reject_code ?? undefined,
    refresh_interval: body.refresh_interval ?? undefined,
    external_data: body.external_data ?? null,
  });
}
