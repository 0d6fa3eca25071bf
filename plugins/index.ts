/**
 * The built-in endpoint groups, in dependency order. This list and main.ts are the composition
 * root: the only place that knows both core and the groups (core never imports a plugin).
 */
import type { BuiltinGroup } from '../core/types.ts';
import openapi from './openapi/index.ts';
import health from './health/index.ts';
import events from './events/index.ts';
import history from './history/index.ts';
import datasource from './datasource/index.ts';
import proxy from './proxy/index.ts';
import middlewares from './middlewares/index.ts';
import services from './services/index.ts';
import resources from './resources/index.ts';
import mtls from './mtls/index.ts';
import proxyConfig from './proxy-config/index.ts';
import importGroup from './import/index.ts';
import traefikPlugins from './plugins/index.ts';
import staticConfig from './static/index.ts';
import ip from './ip/index.ts';
import jobs from './jobs/index.ts';
import containers from './container/index.ts';
import logs from './logs/index.ts';
import auth from './auth/index.ts';
import backups from './backup/index.ts';
import notifications from './notifications/index.ts';
import system from './system/index.ts';
import metrics from './metrics/index.ts';
import ui from './ui/index.ts';

export const builtinGroups: BuiltinGroup[] = [
  { name: 'openapi', plugin: openapi },
  { name: 'health', plugin: health },
  { name: 'events', plugin: events },
  // before every group whose routes write: its request hooks attribute store changes to tokens
  { name: 'history', plugin: history },
  { name: 'datasource', plugin: datasource },
  { name: 'proxy', plugin: proxy },
  { name: 'middlewares', plugin: middlewares },
  { name: 'services', plugin: services },
  { name: 'mtls', plugin: mtls },
  { name: 'resources', plugin: resources },
  { name: 'proxy-config', plugin: proxyConfig },
  { name: 'import', plugin: importGroup },
  { name: 'plugins', plugin: traefikPlugins },
  { name: 'ip', plugin: ip },
  // backup and jobs before container: its update jobs take pre-update backups on the job runner
  { name: 'backup', plugin: backups },
  { name: 'jobs', plugin: jobs },
  { name: 'container', plugin: containers },
  // after container: its apply job recreates Gerbil on the container group's update machinery
  { name: 'static', plugin: staticConfig },
  { name: 'logs', plugin: logs },
  { name: 'auth', plugin: auth },
  { name: 'notifications', plugin: notifications },
  { name: 'system', plugin: system },
  { name: 'metrics', plugin: metrics },
  { name: 'ui', plugin: ui },
];
