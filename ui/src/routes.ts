/**
 * Every screen, its path and the class of API routes it needs (API.md §2.3): `config` screens work
 * without a token in auth.mode ops, `ops` screens ask for one, `admin` needs an admin token.
 * Screens are loaded on first visit (one chunk each), so the initial bundle holds only the shell.
 */
import type { ComponentType } from 'preact';

export interface ScreenProps {
  params: Record<string, string>;
}
export interface RouteDef {
  path: string;
  title: string;
  group: 'config' | 'ops' | 'admin';
  load: () => Promise<{ default: ComponentType<ScreenProps> }>;
  /** Shown in the navigation (detail pages are not). */
  nav?: boolean;
}

export const ROUTES: RouteDef[] = [
  { path: '/', title: 'Dashboard', group: 'config', nav: true, load: () => import('./screens/dashboard') },
  { path: '/resources', title: 'Resources', group: 'config', nav: true, load: () => import('./screens/resources') },
  { path: '/resources/new', title: 'New resource', group: 'config', load: () => import('./screens/resource-edit') },
  { path: '/resources/:id/edit', title: 'Edit resource', group: 'config', load: () => import('./screens/resource-edit') },
  { path: '/resources/:id', title: 'Resource', group: 'config', load: () => import('./screens/resource-detail') },
  { path: '/middlewares', title: 'Middlewares', group: 'config', nav: true, load: () => import('./screens/middlewares') },
  { path: '/middlewares/new', title: 'New middleware', group: 'config', load: () => import('./screens/middleware-edit') },
  { path: '/middlewares/:id', title: 'Middleware', group: 'config', load: () => import('./screens/middleware-edit') },
  { path: '/services', title: 'Services', group: 'config', nav: true, load: () => import('./screens/services') },
  { path: '/services/new', title: 'New service', group: 'config', load: () => import('./screens/service-edit') },
  { path: '/services/:id', title: 'Service', group: 'config', load: () => import('./screens/service-edit') },
  { path: '/datasources', title: 'Data sources', group: 'config', nav: true, load: () => import('./screens/datasources') },
  { path: '/plugins', title: 'Traefik plugins', group: 'config', nav: true, load: () => import('./screens/plugins') },
  { path: '/explorer', title: 'Traefik explorer', group: 'config', nav: true, load: () => import('./screens/explorer') },
  { path: '/certificates', title: 'Certificates', group: 'ops', nav: true, load: () => import('./screens/certificates') },
  { path: '/targets', title: 'Provider targets', group: 'config', nav: true, load: () => import('./screens/targets') },
  { path: '/mtls', title: 'mTLS', group: 'config', nav: true, load: () => import('./screens/mtls') },
  { path: '/history', title: 'History', group: 'config', nav: true, load: () => import('./screens/history') },
  { path: '/backups', title: 'Backups', group: 'ops', nav: true, load: () => import('./screens/backups') },
  { path: '/containers', title: 'Containers', group: 'ops', nav: true, load: () => import('./screens/containers') },
  { path: '/security', title: 'Security', group: 'ops', nav: true, load: () => import('./screens/security') },
  { path: '/notifications', title: 'Notifications', group: 'ops', nav: true, load: () => import('./screens/notifications') },
  { path: '/logs', title: 'Logs', group: 'ops', nav: true, load: () => import('./screens/logs') },
  { path: '/server-plugins', title: 'Server plugins', group: 'ops', nav: true, load: () => import('./screens/server-plugins') },
  { path: '/tokens', title: 'Tokens', group: 'admin', nav: true, load: () => import('./screens/tokens') },
];
