# Stack Manager: multi-stage build, non-root runtime.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    DATA_DIR=/data \
    BACKUP_DIR=/backups \
    PLUGINS_DIR=/plugins \
    PORT=3456
WORKDIR /app
RUN groupadd --system --gid 3456 stack && useradd --system --uid 3456 --gid stack --home /app stack \
 && mkdir -p /data /backups /plugins && chown stack:stack /data /backups /plugins
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY core ./core
COPY plugins ./plugins
COPY config ./config
COPY examples ./examples
USER stack
VOLUME ["/data", "/backups"]
EXPOSE 3456
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3456)+'/api/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# tsx runs the TypeScript sources directly (it is a runtime dependency)
CMD ["node", "--import=tsx", "plugins/main.ts"]
