/** Turns Docker's list and inspect answers into the API's Container objects (API.md §4.11). */
import type Docker from 'dockerode';
import type { ContainerView, PortView } from './schemas.ts';
import { plainName } from './stack.ts';

const HEALTH = new Set(['healthy', 'unhealthy', 'starting']);

/** Docker's zero time (`0001-01-01T00:00:00Z`) means "never started". */
function isoOrNull(value: string | undefined): string | null {
  if (!value || value.startsWith('0001-')) return null;
  const time = Date.parse(value);
  return Number.isNaN(time) ? null : new Date(time).toISOString();
}

/** The container's name as the API shows it: its first Docker name without the leading `/`. */
export const nameOf = (summary: Docker.ContainerInfo): string => plainName(summary.Names[0] ?? summary.Id);

function portsOf(summary: Docker.ContainerInfo): PortView[] {
  return (summary.Ports ?? [])
    .map((port) => ({
      private: port.PrivatePort,
      public: port.PublicPort ?? null,
      type: port.Type,
      ip: port.IP ?? null,
    }))
    .sort((a, b) => a.private - b.private || a.type.localeCompare(b.type) || String(a.ip).localeCompare(String(b.ip)));
}

/** One existing container; `inspect` adds start time and health that the list does not carry. */
export function containerView(
  summary: Docker.ContainerInfo,
  inspect: Docker.ContainerInspectInfo,
  inStack: boolean,
  withLabels: boolean,
): ContainerView {
  const health = inspect.State.Health?.Status;
  const view: ContainerView = {
    id: summary.Id,
    name: nameOf(summary),
    image: summary.Image,
    image_id: summary.ImageID,
    state: inspect.State.Status ?? summary.State,
    status: summary.Status,
    health: health && HEALTH.has(health) ? (health as ContainerView['health']) : 'none',
    created_at: new Date(summary.Created * 1000).toISOString(),
    started_at: isoOrNull(inspect.State.StartedAt),
    ports: portsOf(summary),
    in_stack: inStack,
  };
  if (withLabels) view.labels = summary.Labels ?? {};
  return view;
}

/** A configured stack name with no container: every field but the name is null. */
export function missingView(name: string, withLabels: boolean): ContainerView {
  const view: ContainerView = {
    id: null,
    name,
    image: null,
    image_id: null,
    state: 'missing',
    status: null,
    health: null,
    created_at: null,
    started_at: null,
    ports: null,
    in_stack: true,
  };
  if (withLabels) view.labels = null;
  return view;
}
