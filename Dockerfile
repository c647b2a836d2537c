# The partner app's container images (docs/deploying.md). Three targets from one build, each a slim
# stage with only what its process runs (no sources, no devDependencies):
#   runtime (default)  the web app: Next.js's standalone server, as a non-root user
#   migrate            a one-shot job that applies the migrations (run it before each release,
#                      never from every instance at boot): one bundled file and prisma/migrations
#   worker             the job engine's worker (npm run worker): schedules and per-install jobs; any
#                      number of replicas: one bundled file
# The test suite runs the same artifacts on machines that cannot build images: the folders that
# scripts/assemble-runtime.sh and scripts/assemble-jobs.mjs lay out, which this file runs too
# (tests/integration/runtime-image.test.ts). .github/workflows/ci.yml builds all three targets.

# ---- build: dependencies, the Prisma client, the production build, the bundles -------------------
FROM node:24-bookworm-slim AS build
WORKDIR /src
ENV NEXT_TELEMETRY_DISABLED=1 CHECKPOINT_DISABLE=1
# Dependencies first, so that a code change does not reinstall them (npm ci runs prisma generate).
COPY package.json package-lock.json prisma.config.ts ./
COPY prisma ./prisma
COPY scripts/prisma-generate.mjs ./scripts/prisma-generate.mjs
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build \
  && sh scripts/assemble-runtime.sh .next /out/runtime \
  && node scripts/assemble-jobs.mjs worker /out/worker \
  && node scripts/assemble-jobs.mjs migrate /out/migrate

# ---- migrate: a one-shot job ---------------------------------------------------------------------
# migrate.mjs is scripts/migrate.ts with all it imports (esbuild), and reads prisma/migrations beside it.
# The files stay root's and read-only to the node user: the job writes nothing on disk.
FROM node:24-bookworm-slim AS migrate
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /out/migrate ./
USER node
CMD ["node", "migrate.mjs"]

# ---- worker: the scheduled jobs ------------------------------------------------------------------
# worker.mjs is scripts/worker.ts bundled with the `react-server` condition `npm run worker` uses. Node
# runs it directly, without npm or tsx in between: SIGTERM reaches the worker itself, and its exit code
# (0 drained, 1 when SHUTDOWN_TIMEOUT_SECONDS ran out) is the container's. Read-only files, as above.
FROM node:24-bookworm-slim AS worker
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /out/worker ./
USER node
CMD ["node", "worker.mjs"]

# ---- runtime: only what the server needs (the default target: keep it last) ---------------------
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production NEXT_TELEMETRY_DISABLED=1 PORT=3000 HOSTNAME=0.0.0.0
WORKDIR /app
# Owned by node: Next.js writes its cache under .next/cache.
COPY --from=build --chown=node:node /out/runtime ./
USER node
EXPOSE 3000
# Liveness; point your orchestrator's readiness probe at /api/ready (docs/operations.md).
HEALTHCHECK --interval=30s --timeout=3s CMD ["node", "-e", "fetch('http://127.0.0.1:3000/api/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "server.js"]
