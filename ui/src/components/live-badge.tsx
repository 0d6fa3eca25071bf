/** A resource's state in Traefik (API.md §4.19) as a badge; its tooltip lists each instance's errors, verbatim. */
import { LIVE_MEANING, liveTone, type LiveState, type ResourceLive } from '../api/live';
import { Badge } from './ui';

/** The tooltip text: the state's meaning, then per instance its state and Traefik's errors. */
export function liveTooltip(live: ResourceLive): string {
  const lines = [LIVE_MEANING[live.state] ?? live.state];
  for (const instance of live.instances) {
    lines.push(`${instance.source}: ${instance.state}${instance.errors.length ? ' — ' + instance.errors.join('; ') : ''}`);
  }
  if (live.instances.length === 0) lines.push('no Traefik data source is checked');
  return lines.join('\n');
}

export function LiveBadge({ live }: { live: ResourceLive }) {
  return (
    <span class="live-state" title={liveTooltip(live)} data-live-state={live.state}>
      <Badge tone={liveTone(live.state)}>{live.state}</Badge>
    </span>
  );
}

export function LiveStateBadge({ state }: { state: LiveState | 'current' | 'behind' }) {
  return <Badge tone={liveTone(state)}>{state}</Badge>;
}
