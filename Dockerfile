# syntax=docker/dockerfile:1
# agent-sessions image: the CLI, whose `worker` command runs a Temporal worker.
#   docker build -t agent-sessions .
#   docker run --rm -e TEMPORAL_ADDRESS=temporal:7233 agent-sessions worker --allow-parallel-in-progress true

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the root `prepare` script builds, and the sources are not copied yet (this
# keeps the dependency layer cached across source edits). The dependencies need no install
# script here: the Temporal core bridge and swc ship prebuilt binaries in their packages.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY scripts/require-node.cjs ./scripts/
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
COPY models ./models
COPY deploy ./deploy
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
COPY --from=build /app/scripts ./scripts
COPY --from=build /app/models ./models
COPY --from=build /app/deploy ./deploy
# The worker bundles dist/workflows (which imports dist/src/todo) when it starts; the bundle is
# cached under the user's ~/.cache/agent-sessions.
# Local state (the dev server's SQLite file) goes here if the image is ever run without
# TEMPORAL_ADDRESS; owned by the unprivileged user the container runs as.
RUN mkdir -p /app/data && chown node:node /app/data
USER node
ENTRYPOINT ["node", "bin/agent-sessions.js"]
CMD ["--help"]
