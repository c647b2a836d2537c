// The hand-written migrations make exactly the database prisma/schema.prisma describes: every model's
// columns (type, NOT NULL, default), keys, indexes and foreign keys, and every enum, compared with
// PostgreSQL's catalog after all of prisma/migrations is applied (tests/helpers/schema-drift.ts).
// A migration that forgets something the schema declares, or adds something it does not, fails here.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createScratchDatabase, migratedScratchDatabase, type ScratchDatabase } from "../../helpers/database";
import { loadDatamodel, SCHEMA_PATH, type Datamodel } from "../../helpers/prisma-dmmf";
import { schemaDrift, type AllowedExtras } from "../../helpers/schema-drift";

/**
 * What the migrations create on purpose although schema.prisma cannot declare it, each with its
 * reason. Anything else in the database that the schema lacks is drift. Keep this list short, and
 * keep the reason in the migration's comments too.
 */
const MADE_BY_RAW_SQL: AllowedExtras = {
  "index installs.installs_one_live_per_operator":
    "contract §2, one live install per app and operator: a partial unique index (WHERE status is live), " +
    "which Prisma's schema language cannot express (20261121000000_init)",
  "index installs.installs_sync_order_idx":
    "the console's \"last sync\" sort and lagging filter (lib/admin/install-list.ts): synced_at NULLS FIRST, " +
    "which Prisma's schema language cannot express (20261201220000_install_sync_summary)",
  "index installs.installs_sync_failing_idx":
    "the console's \"sync failing\" filter reads only the failing installs (lib/admin/install-list.ts): a partial index " +
    "(WHERE sync_failing), which Prisma's schema language cannot express (20261201220000_install_sync_summary)",
};

let datamodel: Datamodel;
const databases: ScratchDatabase[] = [];
const clients: pg.Client[] = [];

async function connectToNewMigratedDatabase(): Promise<pg.Client> {
  const database = await migratedScratchDatabase();
  databases.push(database);
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  clients.push(client);
  return client;
}

beforeAll(async () => {
  datamodel = await loadDatamodel();
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.end()));
  await Promise.all(databases.map((database) => database.drop()));
});

describe("prisma/migrations against prisma/schema.prisma", () => {
  it("reads every model and enum of the schema from Prisma itself", () => {
    // A guard for the comparison below: an empty datamodel would compare clean against anything.
    expect(datamodel.models.map((model) => model.dbName ?? model.name)).toEqual(
      expect.arrayContaining(["installs", "token_grants", "webhook_deliveries", "staff_actions"]),
    );
    expect(datamodel.enums.map((enumType) => enumType.dbName)).toEqual(["install_status"]);
  });

  it("the migrated database has exactly the schema's tables, columns, keys, indexes, foreign keys and enums", async () => {
    const client = await connectToNewMigratedDatabase();

    expect(await schemaDrift(datamodel, client, MADE_BY_RAW_SQL)).toEqual([]);
  });

  it("reports each kind of drift, one sentence each, on a database a migration got wrong", async () => {
    // The same migrations, then what a faulty hand-written migration could have done.
    const client = await connectToNewMigratedDatabase();
    await client.query(`
      ALTER TABLE synced_charges ALTER COLUMN price TYPE DECIMAL(10,2);
      ALTER TABLE install_events ALTER COLUMN cause DROP NOT NULL;
      ALTER TABLE webhook_rejections ALTER COLUMN minute TYPE TIMESTAMP(3);
      ALTER TABLE installs ALTER COLUMN granted_scopes TYPE TEXT USING array_to_string(granted_scopes, ' ');
      ALTER TABLE oauth_client_health DROP CONSTRAINT oauth_client_health_pkey;
      ALTER TABLE oauth_client_health ADD CONSTRAINT oauth_client_health_pkey PRIMARY KEY (client_id, updated_at);
      ALTER TABLE token_grants ALTER COLUMN version SET DEFAULT 0;
      ALTER TABLE installs DROP COLUMN reauth_url;
      ALTER TABLE installs ADD COLUMN notes TEXT;
      DROP INDEX staff_actions_staff_email_requested_at_id_idx;
      CREATE INDEX staff_actions_staff_email_requested_at_id_idx ON staff_actions (staff_email, requested_at, id);
      DROP INDEX installs_slug_idx;
      DROP INDEX installs_operator_id_idx;
      CREATE INDEX installs_operator_id_idx ON installs USING hash (operator_id);
      DROP INDEX webhook_deliveries_dedupe_key_key;
      ALTER TABLE sync_runs DROP CONSTRAINT sync_runs_install_row_id_fkey;
      ALTER TABLE sync_runs ADD CONSTRAINT sync_runs_install_row_id_fkey
        FOREIGN KEY (install_row_id) REFERENCES installs (id) ON DELETE RESTRICT ON UPDATE CASCADE;
      ALTER TABLE api_budgets ADD CONSTRAINT api_budgets_quota_positive CHECK (quota > 0);
      ALTER TYPE install_status ADD VALUE 'PAUSED';
      CREATE TABLE leftovers (id INTEGER PRIMARY KEY);
      DROP TABLE alert_incidents;
    `);

    expect(await schemaDrift(datamodel, client, MADE_BY_RAW_SQL)).toEqual([
      "column install_events.cause: NOT NULL in the schema, nullable in the database",
      "column installs.granted_scopes: type is text[] in the schema, text in the database",
      "column installs.notes: in the database, not in the schema",
      "column installs.reauth_url: in the schema, not in the database",
      "column synced_charges.price: type is numeric(19,4) in the schema, numeric(10,2) in the database",
      "column token_grants.version: default is 1 in the schema, 0 in the database",
      "column webhook_rejections.minute: type is timestamp(3) with time zone in the schema, timestamp(3) without time zone in the database",
      "constraint api_budgets.api_budgets_quota_positive: in the database, not in the schema",
      "enum install_status: (ACTIVE, NEEDS_REAUTH, REINSTALL_NEEDED, REVOKED) in the schema, (ACTIVE, NEEDS_REAUTH, REINSTALL_NEEDED, REVOKED, PAUSED) in the database",
      "foreign key sync_runs (install_row_id): -> installs (id) ON DELETE CASCADE ON UPDATE CASCADE in the schema, -> installs (id) ON DELETE RESTRICT ON UPDATE CASCADE in the database",
      "index installs.installs_operator_id_idx: (operator_id) in the schema, (operator_id) USING hash in the database",
      "index installs.installs_slug_idx (slug): in the schema, not in the database",
      "index oauth_client_health.oauth_client_health_pkey: primary key (client_id) in the schema, primary key (client_id, updated_at) in the database",
      "index staff_actions.staff_actions_staff_email_requested_at_id_idx: (staff_email, requested_at DESC, id DESC) in the schema, (staff_email, requested_at, id) in the database",
      "index webhook_deliveries.webhook_deliveries_dedupe_key_key unique (dedupe_key): in the schema, not in the database",
      "table alert_incidents: in the schema, not in the database",
      "table leftovers: in the database, not in the schema",
    ]);
  });

  it("reports a schema change that no migration made", async () => {
    // The other way round: someone edits schema.prisma (and regenerates the client) but writes no migration.
    let edited = readFileSync(SCHEMA_PATH, "utf8");
    const edit = (from: string, to: string) => {
      expect(edited).toContain(from);
      edited = edited.replace(from, to);
    };
    edit("price            Decimal?  @db.Decimal(19, 4)", "price            Decimal?  @db.Decimal(19, 2)");
    edit("  slug            String?\n", "  slug            String?\n  notes           String?\n");
    edit("  @@index([slug])\n", "  @@index([slug])\n  @@index([operatorName])\n");
    const dir = mkdtempSync(path.join(tmpdir(), "schema-drift-"));
    try {
      writeFileSync(path.join(dir, "schema.prisma"), edited);
      const editedDatamodel = await loadDatamodel(path.join(dir, "schema.prisma"));
      const client = await connectToNewMigratedDatabase();

      expect(await schemaDrift(editedDatamodel, client, MADE_BY_RAW_SQL)).toEqual([
        "column installs.notes: in the schema, not in the database",
        "column synced_charges.price: type is numeric(19,2) in the schema, numeric(19,4) in the database",
        "index installs.installs_operator_name_idx (operator_name): in the schema, not in the database",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses raw-SQL objects not listed as made on purpose, and excuses that no longer match anything", async () => {
    const client = await connectToNewMigratedDatabase();

    expect(
      await schemaDrift(datamodel, client, { "index installs.gone_idx": "an index a later migration dropped" }),
    ).toEqual([
      "index installs.gone_idx: listed as made on purpose, but not in the database",
      "index installs.installs_one_live_per_operator: in the database, not in the schema",
      "index installs.installs_sync_failing_idx: in the database, not in the schema",
      "index installs.installs_sync_order_idx: in the database, not in the schema",
    ]);
  });
});

describe("the comparison itself, on every kind of column Prisma maps", () => {
  // A schema with each Prisma scalar type, the usual @db.* types, lists, an enum with @map, defaults,
  // a composite key, named and hashed indexes and relations with and without onDelete, and the SQL
  // Prisma's schema engine writes for it (what `prisma migrate diff --from-empty` prints): no difference.
  const SCHEMA = `
datasource db {
  provider = "postgresql"
}

enum Colour {
  RED
  GREEN @map("green")

  @@map("colour")
}

model Everything {
  id        BigInt    @id @default(autoincrement())
  text      String    @default("it's")
  varchar   String?   @db.VarChar(40)
  char      String?   @db.Char(2)
  uuid      String    @default(uuid()) @db.Uuid
  int       Int       @default(-1)
  small     Int?      @db.SmallInt
  big       BigInt    @default(0)
  float     Float?
  real      Float?    @db.Real
  decimal   Decimal?
  money     Decimal   @default(0.5) @db.Decimal(10, 2)
  flag      Boolean   @default(true)
  at        DateTime  @default(now())
  atTz      DateTime? @map("at_tz") @db.Timestamptz(6)
  day       DateTime? @db.Date
  json      Json      @default("{}")
  plainJson Json?     @map("plain_json") @db.Json
  bytes     Bytes?
  colour    Colour    @default(RED)
  colours   Colour[]
  tags      String[]  @default([])
  numbers   Int[]
  token     String    @default(dbgenerated("gen_random_uuid()")) @db.Uuid
  children  Child[]
  pets      Pet[]

  @@unique([varchar, char])
  @@index([small(sort: Desc), real])
  @@index([text], type: Hash, map: "everything_text_hash")
}

model Child {
  parentId BigInt     @map("parent_id")
  position Int
  parent   Everything @relation(fields: [parentId], references: [id])

  @@id([parentId, position])
  @@map("children")
}

model Pet {
  id      Int         @id @default(autoincrement())
  ownerId BigInt?     @map("owner_id")
  owner   Everything? @relation(fields: [ownerId], references: [id])
  name    String      @unique(map: "pets_name_unique")
}
`;

  const MIGRATION = `
CREATE TYPE "colour" AS ENUM ('RED', 'green');

CREATE TABLE "Everything" (
    "id" BIGSERIAL NOT NULL,
    "text" TEXT NOT NULL DEFAULT 'it''s',
    "varchar" VARCHAR(40),
    "char" CHAR(2),
    "uuid" UUID NOT NULL,
    "int" INTEGER NOT NULL DEFAULT -1,
    "small" SMALLINT,
    "big" BIGINT NOT NULL DEFAULT 0,
    "float" DOUBLE PRECISION,
    "real" REAL,
    "decimal" DECIMAL(65,30),
    "money" DECIMAL(10,2) NOT NULL DEFAULT 0.5,
    "flag" BOOLEAN NOT NULL DEFAULT true,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "at_tz" TIMESTAMPTZ(6),
    "day" DATE,
    "json" JSONB NOT NULL DEFAULT '{}',
    "plain_json" JSON,
    "bytes" BYTEA,
    "colour" "colour" NOT NULL DEFAULT 'RED',
    "colours" "colour"[],
    "tags" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "numbers" INTEGER[],
    "token" UUID NOT NULL DEFAULT gen_random_uuid(),

    CONSTRAINT "Everything_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "children" (
    "parent_id" BIGINT NOT NULL,
    "position" INTEGER NOT NULL,

    CONSTRAINT "children_pkey" PRIMARY KEY ("parent_id","position")
);

CREATE TABLE "Pet" (
    "id" SERIAL NOT NULL,
    "owner_id" BIGINT,
    "name" TEXT NOT NULL,

    CONSTRAINT "Pet_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "Everything_varchar_char_key" ON "Everything"("varchar", "char");
CREATE INDEX "Everything_small_real_idx" ON "Everything"("small" DESC, "real");
CREATE INDEX "everything_text_hash" ON "Everything" USING HASH ("text");
CREATE UNIQUE INDEX "pets_name_unique" ON "Pet"("name");

ALTER TABLE "children" ADD CONSTRAINT "children_parent_id_fkey" FOREIGN KEY ("parent_id") REFERENCES "Everything"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "Pet" ADD CONSTRAINT "Pet_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "Everything"("id") ON DELETE SET NULL ON UPDATE CASCADE;
`;

  it("finds no difference between a schema and the SQL Prisma writes for it", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "schema-drift-"));
    try {
      writeFileSync(path.join(dir, "schema.prisma"), SCHEMA);
      const fixture = await loadDatamodel(path.join(dir, "schema.prisma"));
      const database = await createScratchDatabase();
      databases.push(database);
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      clients.push(client);
      await client.query(MIGRATION);

      expect(await schemaDrift(fixture, client)).toEqual([]);

      // And each mapping is really compared: one wrong type, default and foreign key action.
      await client.query(`
        ALTER TABLE "Everything" ALTER COLUMN "at" TYPE TIMESTAMPTZ(3), ALTER COLUMN "big" SET DEFAULT 1,
          ALTER COLUMN "bytes" TYPE TEXT, ALTER COLUMN "colours" TYPE TEXT[];
        ALTER TABLE "Pet" DROP CONSTRAINT "Pet_owner_id_fkey",
          ADD CONSTRAINT "Pet_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "Everything"("id") ON DELETE CASCADE;
      `);
      expect(await schemaDrift(fixture, client)).toEqual([
        "column Everything.at: type is timestamp(3) without time zone in the schema, timestamp(3) with time zone in the database",
        "column Everything.big: default is 0 in the schema, 1 in the database",
        "column Everything.bytes: type is bytea in the schema, text in the database",
        "column Everything.colours: type is colour[] in the schema, text[] in the database",
        "foreign key Pet (owner_id): -> Everything (id) ON DELETE SET NULL ON UPDATE CASCADE in the schema, -> Everything (id) ON DELETE CASCADE ON UPDATE NO ACTION in the database",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
