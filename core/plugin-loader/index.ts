/** STUB (being replaced): third-party plugin loader (API.md §6). */
import fp from 'fastify-plugin';
import type { AppConfig } from '../config/schema.ts';

export interface PluginLoaderOptions {
  config: AppConfig;
  generation: number;
}

export default fp<PluginLoaderOptions>(async () => {}, { name: 'plugin-loader' });
