/** Errors of the IP addresses group, built on the core catalogue ids (API.md §2.4, §4.12). */
import { AppError, errors, validationError, type ErrorDetail } from '../../core/errors/app-error.ts';

export const ipErrors = {
  /** `:ip` or body `ip` is not one IPv4 or IPv6 address (no CIDR, no zone id). */
  invalidIp: (pointer: string) =>
    validationError([{ path: pointer, message: 'must be a single IPv4 or IPv6 address' }]),
  noBouncer: () =>
    errors.notConfigured(
      'CrowdSec is not configured: set crowdsec.url and crowdsec.bouncer_key (CROWDSEC_BOUNCER_KEY) to read decisions',
    ),
  noMachine: (what = 'unban') =>
    errors.notConfigured(
      `CrowdSec machine credentials are not configured: set crowdsec.machine_id and crowdsec.machine_password (CROWDSEC_MACHINE_ID, CROWDSEC_MACHINE_PASSWORD) to ${what}`,
    ),
  validation: (details: ErrorDetail[]) => validationError(details),
  /** 409 `allowlisted` (API.md §4.23): a manual decision on a target an active allowlist entry covers. */
  allowlisted: (value: string, entries: { id: string; value: string }[]) =>
    new AppError(
      409,
      'allowlisted',
      `${value} is allowlisted by ${entries.map((e) => `${e.id} (${e.value})`).join(', ')}: remove the entry first`,
      entries.map((e) => ({ path: `/api/ip/allowlist/${e.id}`, message: `allowlist entry for ${e.value}` })),
    ),
  decisionNotFound: (id: number) => errors.notFound(`no active CrowdSec decision has id ${id}`),
  allowlistNotFound: (id: string) => errors.notFound(`no allowlist entry has id ${id}`),
  /** A LAPI call failed; `message` comes from the client (names CrowdSec, never a key or password). */
  crowdsec: (message: string) => errors.upstreamUnavailable(message),
  /** No public-IP provider gave a usable answer; one reason per provider. */
  noPublicIp: (failures: string[]) =>
    errors.upstreamUnavailable(
      `no public-IP service gave a valid IP: ${failures.join('; ') || 'no providers configured (ip.public_providers)'}`,
    ),
};
