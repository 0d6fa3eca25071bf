/** What the operator reads after a ban, an unban or an allowlist change (API.md §4.23 effective_within_s). */
export function effectiveText(seconds: number | null | undefined, change: 'starts' | 'stops'): string {
  if (seconds === null || seconds === undefined || Number.isNaN(seconds))
    return 'No CrowdSec bouncer middleware is known: when Traefik feels it is unknown.';
  if (seconds === 0) return `Traefik ${change} blocking at once (its bouncer caches nothing).`;
  return `Traefik ${change} blocking within ${seconds} s.`;
}
