/**
 * IP addresses and CIDR ranges as Traefik 3.7.15's IP checker reads them (pkg/ip/checker.go:
 * net.ParseIP, else net.ParseCIDR), for the middlewares' sourceRange/excludedIPs and the TCP
 * ClientIP matcher. Measured on the binary: 10.0.0.0/33, 010.0.0.1, fe80::1%eth0 and
 * 2001:db8::/129 are refused ("invalid CIDR address"); 10.0.0.1/24, /08, ::ffff:10.0.0.1/120 and
 * ' 10.0.0.1' are accepted.
 */
import { isIP } from 'node:net';

/** Go's netip.ParseAddr without a zone (Traefik 3.7.15's net.ParseIP): no leading zeros, no `%eth0`. */
const goAddr = (s: string): 0 | 4 | 6 => (s.includes('%') ? 0 : (isIP(s) as 0 | 4 | 6));

/** An entry of Traefik's IP checker: an address (net.ParseIP) or a CIDR (net.ParseCIDR). */
export function goIpOrCidr(entry: string): boolean {
  const value = entry.trim(); // measured: Traefik 3.7.15 builds ' 10.0.0.1'
  if (goAddr(value)) return true;
  const slash = value.indexOf('/');
  if (slash < 0) return false;
  const family = goAddr(value.slice(0, slash));
  const bits = value.slice(slash + 1);
  return family !== 0 && /^[0-9]+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}
