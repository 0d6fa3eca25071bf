/** The server's package version (package.json), reported by /api/health and plugins' `host`. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from './config/load.ts';

export const APP_VERSION: string = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')).version;
/** Version of the plugin host API (API.md §6). */
export const HOST_API_VERSION = '1.0.0';

/** Whole seconds since the process started: the same clock before the app exists and across hot reloads. */
export const uptimeSeconds = (): number => Math.floor(process.uptime());
