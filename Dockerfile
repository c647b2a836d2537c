# The partner app's container image (docs/deploying.md). Three targets from one build:
#   runtime (default)  the web app: Next.js's standalone server, as a non-root user
#   migrate            a one-shot job that applies the migrations (run it before each release,
#                      never from every instance at boot)
#   worker             the job engine's worker (npm run worker): schedules and per-install jobs; any number of replicas
# These machines cannot build images; the test suite runs the same artifact (the standalone server,
# assembled by scripts/assemble-runtime.sh, which this file runs too).

# ---- build: dependencies, the Prisma client, the production build ------------------------------
FROM node:24-bookworm-slim AS build
WORKDIR /src
ENV NEXT_TELEMETRY_DISABLED=1 CHECKPOINT_DISABLE=1
# Dependencies first, so that a code change does not reinstall them (npm ci runs prisma generate).
COPY package.json package-lock.json prisma.config.ts ./
COPY prisma ./prisma
COPY scripts/prisma-generate.mjs ./scripts/prisma-generate.mjs
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && sh scripts/assemble-runtime.sh .next /out

# ---- migrate: a one-shot job ---------------------------------------------------------------------
FROM build AS migrate
ENV NODE_ENV=production
USER node
CMD ["npm", "run", "db:migrate"]

# ---- worker: the scheduled jobs ------------------------------------------------------------------
# `npm run worker` without npm and tsx's wrapper process in between: SIGTERM reaches the worker
# itself, and its exit code (0 drained, 1 when SHUTDOWN_TIMEOUT_SECONDS ran out) is the container's.
FROM build AS worker
ENV NODE_ENV=production
USER node
CMD ["node", "--conditions=react-server", "--import", "tsx", "scripts/worker.ts"]

# ---- runtime: only what the server needs ---------------------------------------------------------
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production NEXT_TELEMETRY_DISABLED=1 PORT=3000 HOSTNAME=0.0.0.0
WORKDIR /app
COPY --from=build --chown=node:node /out ./
USER node
EXPOSE 3000
# Liveness; point your orchestrator's readiness probe at /api/ready (docs/operations.md).
HEALTHCHECK --interval=30s --timeout=3s CMD ["node", "-e", "fetch('http://127.0.0.1:3000/api/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "server.js"]
