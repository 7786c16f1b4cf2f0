# syntax=docker/dockerfile:1
# The Live Stream Hosting API server: docker build -t live-stream-hosting-api .
# Deploying, configuring and upgrading it: docs/operators.md (Deploying the image).
# Everything runs as the image's `node` user (BuildKit, Docker's default builder since 23.0,
# creates each WORKDIR as the USER before it).

# Build: every dependency, the build (the docs and the contract the server reads), then the
# development dependencies (Redocly, TypeScript, tsx, Prism, vitest) removed.
FROM node:24-slim AS build
USER node
WORKDIR /home/node/app
COPY --chown=node:node package.json package-lock.json .npmrc ./
# No scripts yet: `prepare` builds from the sources, copied next (this layer stays cached until
# the dependencies change). The one install script of the server's dependencies, argon2's
# `node-gyp-build`, only picks the prebuilt binary the package ships (linux x64 and arm64 among
# them); skipped, the binary is found the same way when argon2 is first loaded.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY --chown=node:node . .
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# Run: Node 24, the server's sources, its production dependencies and the build, owned by root
# (the server writes only its data directory); node itself is PID 1 and handles the signals.
FROM node:24-slim
# HOST stays unset: the server listens on every interface of the container, which is how the
# published port reaches it (and the health check asks 127.0.0.1).
ENV NODE_ENV=production PORT=8080 DATA_DIR=/home/node/data
USER node
WORKDIR /home/node/app
COPY --from=build /home/node/app ./
# The embedded database's directory (unused with DATABASE_URL); mount a volume here to keep it.
RUN mkdir "$DATA_DIR"
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/readyz`, { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The server's graceful stop: requests in flight answered, background jobs stopped, database closed.
STOPSIGNAL SIGTERM
CMD ["node", "server/main.ts"]
