# Stack Manager image. Two stages: `build` compiles the TypeScript and the web UI with all
# dependencies; `runtime` holds production dependencies, config/ and the compiled dist/ only.
# Node 24 is the LTS line; tini (Debian's package) is PID 1 so signals reach node and zombies are reaped;
# git (Debian's) writes the config history in /data/.history (docs/API.md "Config history").
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would build before the sources are copied; the build runs below
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY core ./core
COPY model ./model
COPY plugins ./plugins
RUN npm run build:server
# the web UI (Vite): it reads the shipped templates from config/templates at build time
COPY config ./config
COPY ui ./ui
RUN npm run build:ui

FROM ${NODE_IMAGE} AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini git \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    DATA_DIR=/data \
    BACKUP_DIR=/backups \
    PLUGINS_DIR=/plugins \
    PORT=3456
WORKDIR /app
# a fixed uid/gid, so bind-mounted data dirs can be chowned to it (deploy/compose/ does that)
RUN groupadd --system --gid 3456 stack \
 && useradd --system --uid 3456 --gid stack --home-dir /app --shell /usr/sbin/nologin stack \
 && mkdir -p /data /backups /plugins \
 && chown stack:stack /data /backups /plugins
COPY package.json package-lock.json ./
# production dependencies only; --ignore-scripts: no `prepare` build (dist/ comes from the build stage)
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force
COPY config ./config
COPY examples ./examples
COPY --from=build /app/dist ./dist
# the built web UI, served at / (plugins/ui looks for ui/dist under the app root)
COPY --from=build /app/ui/dist ./ui/dist
USER stack
VOLUME ["/data", "/backups"]
EXPOSE 3456
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3456)+'/api/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
# an 8 MiB young generation (semi-space): RSS at 1,000 resources 144-159 MiB on Node 24 (bench/rss.ts;
# V8's default semi-spaces took 260-290 MiB in session 9); 2 MiB semi-spaces collected
# the young generation 4x as often and cost the provider ~1 us of CPU per poll (issue 11)
CMD ["node", "--max-semi-space-size=8", "dist/plugins/main.js"]
