# svc: one image for every role. `docker run svc` is the all-in-one server; pick a role with --role or SVC_ROLE.
# Our .ts files run on Node's type stripping, so the image needs no build step beyond installing dependencies.

FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only: the image has Node 24 itself, so the `node` devDependency is not needed. This also
# installs PostgreSQL for the image's platform (@embedded-postgres/linux-<arch>, its install script approved in
# package.json allowScripts): the all-in-one server runs it as a child process, as the user `node`, in /data/pg.
RUN npm ci --omit=dev --no-audit --no-fund
# The Claude Code and Codex SDKs (runtime_a, runtime_b; about 800 MB of CLI binaries) only when asked for:
# `docker build --build-arg SVC_RUNTIMES=true .` (the versions package.json pins in peerDependencies).
ARG SVC_RUNTIMES=false
RUN if [ "$SVC_RUNTIMES" = true ]; then \
      npm install --no-save --save-optional --omit=dev --no-audit --no-fund $(node -p "Object.entries(require('./package.json').peerDependencies).map(([n, v]) => n + '@' + v).join(' ')"); \
    fi

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    SVC_DATA_DIR=/data \
    SVC_STATE_DIR=/data/state \
    PORT=8080
WORKDIR /app
# The runner runs every command an agent runs inside bubblewrap (README, "Command sandbox").
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap \
 && rm -rf /var/lib/apt/lists/*
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY src ./src
COPY sql ./sql
COPY skills ./skills
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["node", "bin/svc.js", "serve", "--host", "0.0.0.0"]
CMD []
