// Prisma CLI configuration (Prisma 7 moved the connection URL out of schema.prisma).
// `prisma generate` needs no database. Migrations are applied by scripts/migrate.ts, which keeps
// Prisma's `_prisma_migrations` bookkeeping, so `prisma migrate status` agrees on any machine that
// has Prisma's schema engine.
import { defineConfig } from "prisma/config";

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: {
    // Only the CLI reads this; the app reads DATABASE_URL through lib/env.ts. The database name is
    // the product's (lib/config/product.ts), written out: the Docker build loads this file before
    // lib/ is copied in. `npm run rename` rewrites it, and tests/unit/product-names.test.ts checks it.
    url: process.env.DATABASE_URL ?? "postgresql://localhost:5432/partner_app",
  },
});
