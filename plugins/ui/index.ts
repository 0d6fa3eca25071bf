/**
 * The operator web UI at `/` (API.md §2.1, §4.18): static files from the built UI (or `ui.dir`),
 * SPA fallback to index.html for paths without a file extension, no-cache for index.html and
 * immutable caching for the hashed files under assets/. Public in every auth mode: the UI's own
 * API calls carry the token. Unknown /api paths keep their JSON 404.
 */
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import fp from 'fastify-plugin';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../../core/errors/app-error.ts';
import { uiDirectory } from './location.ts';

const IMMUTABLE = 'public, max-age=31536000, immutable';

async function ui(app: FastifyInstance): Promise<void> {
  if (!app.config.ui.enabled) return; // every non-/api GET answers the JSON 404
  const { dir, builtIn } = uiDirectory(app.config.ui.dir);
  const index = path.join(dir, 'index.html');
  const notBuilt = builtIn
    ? `the web UI is not built: run \`npm run build:ui\` in ${path.dirname(path.dirname(dir))}, or set UI_DIR to a built UI`
    : `ui.dir ${dir} holds no index.html`;
  if (existsSync(index)) app.log.info({ dir }, 'serving the web UI at /');
  else app.log.warn({ dir }, notBuilt);

  await app.register(async (scope) => {
    // sendFile only: the route below decides what is served; send() adds ETag and Last-Modified
    await scope.register(fastifyStatic, {
      root: dir,
      serve: false,
      cacheControl: false,
      dotfiles: 'deny',
      index: false,
    });
    scope.get(
      '/*',
      {
        // versioned: false: browsers send Accept: text/html; methodHint: a POST to /api/x stays 404, not 405
        config: { auth: 'public', versioned: false, methodHint: false },
        // no logLevel of its own: a served file is a successful public request (debug), a 404 stays at info
        schema: { hide: true },
      },
      (request, reply) => serve(request, reply, dir, index, notBuilt),
    );
  });
}

async function serve(
  request: FastifyRequest,
  reply: FastifyReply,
  dir: string,
  index: string,
  notBuilt: string,
): Promise<FastifyReply> {
  const pathname = request.url.split('?')[0];
  if (pathname === '/api' || pathname.startsWith('/api/')) return notFound(reply);
  const relative = relativePath(pathname);
  if (relative === null) return notFound(reply);
  if (!existsSync(index)) throw errors.notFound(notBuilt);
  const file = relative === '' ? null : await stat(path.join(dir, relative)).catch(() => null);
  if (file?.isFile()) {
    reply.header('cache-control', relative.startsWith('assets/') ? IMMUTABLE : 'no-cache');
    return reply.sendFile(relative);
  }
  // a client-side route (no extension): the app itself; a missing file: 404
  if (path.posix.extname(relative) !== '') return notFound(reply);
  reply.header('cache-control', 'no-cache');
  return reply.sendFile('index.html');
}

/** The app's JSON 404 (or 405). */
function notFound(reply: FastifyReply): FastifyReply {
  reply.callNotFound();
  return reply;
}

/**
 * The decoded path below the UI dir, or null when it is not one we serve: bad encoding, NUL,
 * `..` segments (also encoded ones: the path is decoded first), dotfiles (.vite/manifest.json).
 */
function relativePath(pathname: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return null;
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return null;
  const segments = decoded.split('/').filter((segment) => segment !== '');
  if (segments.some((segment) => segment.startsWith('.'))) return null;
  return segments.join('/');
}

export default fp(ui, { name: 'ui', dependencies: ['auth'], decorators: { fastify: ['config'] } });
