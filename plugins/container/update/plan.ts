/**
 * Checks an update request against Docker before the job starts (API.md §4.11): every name must be
 * an existing stack container (else 422 naming each bad entry), and the containers that share one's
 * network namespace (`network_mode: container:<it>`) are found so they are recreated with it.
 */
import type Docker from 'dockerode';
import { validationError, type ErrorDetail } from '../../../core/errors/app-error.ts';
import { COMPOSE_SERVICE_LABEL, plainName, type StackMembership } from '../stack.ts';
import { nameOf } from '../views.ts';
import { networkTargetOf } from './create-options.ts';
import type { PlannedStep } from '../../jobs/index.ts';

export interface PlannedUnit {
  /** The stack container to update. */
  name: string;
  /** Containers in its network namespace, recreated with it (not themselves in the request). */
  dependants: string[];
}

export const REPLACE_STEPS = ['rename', 'create', 'start', 'health'] as const;

/** The units of the request, or a 422 whose details name each unknown or non-stack entry. */
export function planUpdate(
  summaries: Docker.ContainerInfo[],
  stack: StackMembership,
  requested: string[],
): PlannedUnit[] {
  const byName = new Map(summaries.map((s) => [nameOf(s), s]));
  const details: ErrorDetail[] = [];
  const names = requested.map(plainName);
  names.forEach((name, index) => {
    const summary = byName.get(name);
    if (!summary) details.push({ path: `/services/${index}`, message: `no container named ${name}` });
    else if (!stack.includes(name, summary.Labels))
      details.push({ path: `/services/${index}`, message: `container ${name} is not part of the stack` });
  });
  if (details.length > 0) throw validationError(details);
  const listed = new Set(names);
  return names.map((name) => {
    const { Id } = byName.get(name)!;
    const dependants = summaries
      .filter((s) => {
        const target = networkTargetOf(s.HostConfig?.NetworkMode);
        return target !== null && (target === name || target === Id) && !listed.has(nameOf(s));
      })
      .map(nameOf)
      .sort();
    return { name, dependants };
  });
}

/** A compose service's stack container (`name`), or why there is none (`problem`). */
export type ServiceMatch = { name: string } | { problem: string };

/**
 * The stack container of a compose service: the one named like it, else the only stack container
 * labelled `com.docker.compose.service=<service>` (compose names its containers `<project>-<service>-1`).
 */
export function matchService(summaries: Docker.ContainerInfo[], stack: StackMembership, service: string): ServiceMatch {
  const inStack = summaries.filter((s) => stack.includes(nameOf(s), s.Labels));
  if (inStack.some((s) => nameOf(s) === service)) return { name: service };
  const labelled = inStack.filter((s) => s.Labels?.[COMPOSE_SERVICE_LABEL] === service).map(nameOf);
  if (labelled.length === 1) return { name: labelled[0] };
  if (labelled.length > 1)
    return {
      problem: `several stack containers are labelled ${COMPOSE_SERVICE_LABEL}=${service} (${labelled.sort().join(', ')}); keep one in the stack`,
    };
  if (summaries.some((s) => nameOf(s) === service)) return { problem: `container ${service} is not part of the stack` };
  return { problem: `no stack container named ${service} or labelled ${COMPOSE_SERVICE_LABEL}=${service}` };
}

/** The steps of replacing a unit: each member's rename → health, then each one's cleanup (once the unit is healthy). */
export function recreateSteps(unit: PlannedUnit): PlannedStep[] {
  const members = [unit.name, ...unit.dependants];
  return [
    ...members.flatMap((member) => REPLACE_STEPS.map((step) => ({ service: member, step }))),
    ...members.map((member) => ({ service: member, step: 'cleanup' })),
  ];
}

/** The job's steps in the order they run (cleanup only once the unit is healthy). */
export function plannedSteps(units: PlannedUnit[], backup: boolean): PlannedStep[] {
  const steps: PlannedStep[] = backup ? [{ service: null, step: 'backup' }] : [];
  for (const unit of units) steps.push({ service: unit.name, step: 'pull' }, ...recreateSteps(unit));
  return steps;
}
