# svc: one image for every role. `docker run svc` is the all-in-one server; pick a role with --role or SVC_ROLE.
# Our .ts files run on Node's type stripping, so the image needs no build step beyond installing dependencies.
#
# Two flavours from this file:
#   docker build -t svc .                      the full image (default target `full`): every role and runtime
#   docker build --target slim -t svc:slim .   without the Claude Code and Codex binaries (about 0.8 GB less): for
#                                              conductors and runners, and for workers that serve only `general`
# deploy/helm/svc runs conductors and runners on `<tag>-slim` and workers on `<tag>`.

FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only: the image has Node 24 itself, so the `node` devDependency is not needed. This also
# installs PostgreSQL for the image's platform (@embedded-postgres/linux-<arch>, its install script approved in
# package.json allowScripts): the all-in-one server runs it as a child process, as the user `node`, in /data/pg.
RUN npm ci --omit=dev --no-audit --no-fund
# The Claude Code and Codex SDKs (runtime_a, runtime_b): optional peer dependencies that `npm ci` leaves out, added at
# the versions package.json pins (what `npm run install:runtimes` does in a clone; the slim stage removes them again).
RUN npm install --no-save --save-optional --omit=dev --no-audit --no-fund \
      $(node -p "Object.entries(require('./package.json').peerDependencies).map(([n, v]) => n + '@' + v).join(' ')")

# The slim dependencies: the same tree less the optional Claude Agent SDK and Codex SDK packages and the per-platform
# packages that carry their native binaries. svc imports them on first use of runtime_a or runtime_b only, and says
# which package is missing when a run asks for one of those runtimes here.
FROM deps AS deps-slim
RUN rm -rf node_modules/@anthropic-ai/claude-agent-sdk node_modules/@anthropic-ai/claude-agent-sdk-* \
           node_modules/@openai/codex node_modules/@openai/codex-* \
 && test ! -e node_modules/@openai/codex-sdk && test ! -e node_modules/@anthropic-ai/claude-agent-sdk

FROM node:24-bookworm-slim AS base
# no PORT: each role listens on svc's default (a conductor or the all-in-one server 8080, a runner or worker 7070)
ENV NODE_ENV=production \
    SVC_DATA_DIR=/data \
    SVC_STATE_DIR=/data/state
WORKDIR /app
# bubblewrap: the runner runs every command an agent runs inside it (docs/sandboxes.md, "Command sandbox").
# tini: PID 1 that forwards signals to svc and reaps the orphans of sandboxed commands and agent CLIs (Node as PID 1
# does neither). `docker run --init` is then unnecessary; Kubernetes has no such flag, hence baked in.
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap tini \
 && rm -rf /var/lib/apt/lists/*
COPY package.json ./
COPY bin ./bin
COPY src ./src
COPY sql ./sql
COPY skills ./skills
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080 7070
HEALTHCHECK --interval=10s --timeout=3s CMD node -e "Promise.any((process.env.PORT?[process.env.PORT]:[8080,7070]).map(p=>fetch('http://127.0.0.1:'+p+'/healthz').then(r=>{if(!r.ok)throw 0}))).then(()=>process.exit(0),()=>process.exit(1))"
ENTRYPOINT ["/usr/bin/tini", "--", "node", "bin/svc.js", "serve", "--host", "0.0.0.0"]
CMD []

FROM base AS slim
COPY --from=deps-slim /app/node_modules ./node_modules

# The default target (last stage): everything, including the Claude Code and Codex binaries the worker's runtime_a
# and runtime_b run.
FROM base AS full
COPY --from=deps /app/node_modules ./node_modules
