#!/bin/sh
# Assembles the production server's files, exactly as the container image holds them: the Dockerfile
# runs this in its build stage and copies <out> into the runtime stage, and the test suite runs it
# too (tests/integration/runtime-image.test.ts), so the image's layout is tested on every CI run
# even on machines that cannot build images.
#
#   sh scripts/assemble-runtime.sh <distDir, after `npm run build`> <out>
#
# <out> then holds: server.js and the node_modules it needs (Next.js's standalone output), the static
# files, and prisma/migrations (which /api/ready compares with the database).
set -eu
dist="${1:?usage: assemble-runtime.sh <distDir> <out>}"
out="${2:?usage: assemble-runtime.sh <distDir> <out>}"
[ -f "$dist/standalone/server.js" ] || { echo "assemble-runtime: $dist/standalone/server.js is missing: run npm run build" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
cp -R "$dist/standalone/." "$out/"
# A local .env must never travel into an image (Next.js copies it into the standalone output).
rm -f "$out"/.env "$out"/.env.*
mkdir -p "$out/$dist"
cp -R "$dist/static" "$out/$dist/static"
rm -rf "$out/prisma/migrations"
mkdir -p "$out/prisma/migrations"
cp -R prisma/migrations/. "$out/prisma/migrations/"
echo "assemble-runtime: $out is ready (node $out/server.js)"
