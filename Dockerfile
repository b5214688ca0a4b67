# One image for every service; SERVICES picks what a container runs.
FROM node:22 AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY patches ./patches
RUN SKIP_EMBEDDED_DB=1 npm ci --no-audit --no-fund
COPY . .
RUN npm run build

FROM node:22-alpine
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
COPY patches ./patches
# The install scripts stay off; the driver's fix (patches/README.md) is applied on its own.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npx patch-package && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY docs ./docs
COPY public ./public
USER node
EXPOSE 3000
CMD ["node", "dist/bin/node.js"]
