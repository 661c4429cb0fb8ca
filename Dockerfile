# syntax=docker/dockerfile:1
# Parley's image: one image for every process (embedded server, API, projector worker, CLIs).
#   docker build -t parley .
#   docker run -p 8080:8080 -v parley-data:/data parley            # embedded default on SQLite
# docker-compose.yml runs the same image as API processes and projector workers.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: compile the TypeScript and better-sqlite3's native module, then drop dev dependencies
FROM ${NODE_IMAGE} AS build
# better-sqlite3 downloads a prebuilt binary when one matches, and compiles from source otherwise.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` (the build) needs the sources, copied below; the one native
# module is built explicitly instead.
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npm rebuild better-sqlite3
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY projections ./projections
COPY scripts ./scripts
COPY web ./web
RUN npm run build \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund

# ---- runtime: production dependencies and the built code, no compiler, not root
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    DATA_DIR=/data \
    PORT=8080
WORKDIR /app
# Owned by root and read-only to the process: only DATA_DIR is writable.
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY deploy/healthcheck.js ./deploy/healthcheck.js
RUN mkdir -p /data && chown node:node /data
USER node
# The embedded default's log, read models, blobs and master.key; unused when both
# EVENTSTORE_CONNECTION_STRING and MONGODB_URI are set.
VOLUME ["/data"]
# 8080: plain HTTP (PORT); 8443: HTTPS when HTTPS_PORT=8443 with TLS_CERT_FILE and TLS_KEY_FILE.
EXPOSE 8080 8443
# Liveness (the event loop turns). Readiness is GET /health; a projector worker has no HTTP
# listener and gets its own check in docker-compose.yml.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "deploy/healthcheck.js", "live"]
# Signals reach node directly (exec form, PID 1), which drains on SIGTERM.
CMD ["node", "dist/src/main.js"]
