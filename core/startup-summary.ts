/**
 * The access summary logged once per process start: where the initial admin token is, which routes
 * answer without a token in the current auth.mode, and a warning when more than the public routes
 * are open on an address other than loopback.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { INITIAL_ADMIN_FILE } from './auth/token-store.ts';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost|::ffff:127\.\d+\.\d+\.\d+)$/i;

/** Whether a listen address is reachable from this machine only. */
export function isLoopback(host: string): boolean {
  return LOOPBACK.test(host.replace(/^\[|\]$/g, ''));
}

/** Logs the access summary of a started app (one info line, plus one warning when it applies). */
export function logAccessSummary(app: FastifyInstance, logger: Logger): void {
  const { mode } = app.config.auth;
  const open = app.auth.openRoutes();
  const byClass: Record<string, string[]> = {};
  for (const route of open) (byClass[route.access] ??= []).push(`${route.method} ${route.url}`);
  const tokenFile = path.join(app.store.dataDir, INITIAL_ADMIN_FILE);
  const adminTokenFile = mode !== 'off' && existsSync(tokenFile) ? path.resolve(tokenFile) : null;
  const openRoutes = mode === 'off' ? `all ${open.length} routes` : byClass;
  logger.info(
    { auth_mode: mode, admin_token_file: adminTokenFile, open_routes: openRoutes },
    adminTokenFile
      ? `auth.mode ${mode}: the initial admin token is in ${adminTokenFile}; open_routes answer without a token`
      : `auth.mode ${mode}: open_routes answer without a token`,
  );
  const beyondPublic = open.filter((route) => route.access !== 'public');
  const { host } = app.config.server;
  if (beyondPublic.length > 0 && !isLoopback(host)) {
    const classes = [...new Set(beyondPublic.map((route) => route.access))];
    logger.warn(
      { auth_mode: mode, host, classes, routes: beyondPublic.length },
      `${beyondPublic.length} routes (${classes.join(', ')}) answer without a token on ${host}, which is not loopback: ` +
        (mode === 'off'
          ? 'set AUTH_MODE=ops or all, or HOST=127.0.0.1'
          : 'set AUTH_MODE=all (and PROVIDER_TOKEN for the provider endpoint), or listen on loopback only'),
    );
  }
}
