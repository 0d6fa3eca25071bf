/** What `:ip` and `ip` accept (API.md §4.12): exactly one IPv4 or IPv6 address. */
import { isIP } from 'node:net';

/** 4 or 6 for a plain address; 0 for anything else (CIDR, zone ids, hostnames, empty). */
export function ipVersion(value: string): 0 | 4 | 6 {
  // isIP accepts IPv6 zone ids (fe80::1%eth0); a zone means nothing to CrowdSec or Traefik
  if (value.includes('%')) return 0;
  return isIP(value) as 0 | 4 | 6;
}
