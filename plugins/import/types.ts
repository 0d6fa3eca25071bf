/** What an import plans and reports (API.md §4.24): created objects, skipped items, warnings. */
import type { ErrorDetail } from '../../core/errors/app-error.ts';
import type { ConfigKind } from '../../model/resource-config.ts';
import type { ResourceConfig } from '../../model/types.ts';

export interface PlannedMiddleware {
  id: string;
  name: string;
  type: string;
  config: Record<string, unknown>;
  /** middleware-manager's id */
  from: string;
}

export interface PlannedService extends PlannedMiddleware {
  protocol: 'http' | 'tcp';
}

export interface PlannedAssignment {
  resource_id: string;
  kind: 'middleware' | 'service';
  id: string;
  priority: number | null;
  /** middleware-manager's resource id */
  from: string;
}

export interface PlannedOverride {
  resource_id: string;
  kind: ConfigKind;
  /** the PUT /api/resources/:id/config/<kind> body */
  config: Record<string, unknown>;
  from: string;
  /** the sub-object before the import (what a rollback puts back) */
  previous: Record<string, unknown>;
}

export type SkippedKind = 'middleware' | 'service' | 'resource' | 'assignment' | 'override';

export interface Skipped {
  kind: SkippedKind;
  name: string;
  reason: string;
}

/** The whole import, decided before anything is written; a dry run answers it as is. */
export interface ImportPlan {
  middlewares: PlannedMiddleware[];
  services: PlannedService[];
  assignments: PlannedAssignment[];
  overrides: PlannedOverride[];
  skipped: Skipped[];
  warnings: string[];
}

/** Our objects as the planner sees them (from the middlewares, services and resources groups). */
export interface OurState {
  middlewares: Array<{ id: string; name: string; type: string; config: Record<string, unknown> }>;
  services: Array<{ id: string; name: string; type: string; protocol: string; config: Record<string, unknown> }>;
  resources: OurResource[];
  /** an id the middlewares group would refuse (file or upstream key) */
  middlewareIdTaken(id: string): boolean;
  serviceIdTaken(id: string): boolean;
  /** the group's own hand-edit check: name and config rules */
  checkMiddleware(id: string, data: { name: string; type: string; config: Record<string, unknown> }): ErrorDetail[];
  checkService(
    id: string,
    data: { name: string; type: string; protocol: 'http' | 'tcp'; config: Record<string, unknown> },
  ): ErrorDetail[];
}

export interface OurResource {
  id: string;
  name: string;
  router: string;
  status: 'active' | 'disabled';
  host: string | null;
  hosts: string[];
  entrypoints: string[];
  priority: number | bigint | null;
  middlewares: Array<{ id: string; priority: number }>;
  service_id: string | null;
  config: ResourceConfig;
}
