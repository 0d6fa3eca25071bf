/**
 * Which containers make up the stack (API.md §4.11): those labelled with the compose project when
 * `stack.project` is set, else those named in `stack.containers` (exact names, leading `/` ignored).
 */
import type { AppConfig } from '../../core/config/schema.ts';

export const COMPOSE_PROJECT_LABEL = 'com.docker.compose.project';
/** The compose service a container was created for (apply finds `traefik`/`gerbil` by it, API.md §4.20). */
export const COMPOSE_SERVICE_LABEL = 'com.docker.compose.service';

/** Docker reports names as `/name`; the API speaks of `name`. */
export const plainName = (name: string): string => name.replace(/^\//, '');

export class StackMembership {
  private readonly names: ReadonlySet<string>;

  constructor(private readonly config: AppConfig['stack']) {
    this.names = new Set(config.containers.map(plainName));
  }

  /** Whether a container (by its name and labels) belongs to the stack. */
  includes(name: string, labels: Record<string, string> | null | undefined): boolean {
    if (this.config.project) return labels?.[COMPOSE_PROJECT_LABEL] === this.config.project;
    return this.names.has(plainName(name));
  }

  /**
   * Configured names that should exist: listed as `missing` when absent. Empty in project mode,
   * where the label defines the stack and no name is expected.
   */
  expectedNames(): string[] {
    return this.config.project ? [] : [...this.names];
  }
}
