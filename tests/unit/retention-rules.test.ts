// Every table has a retention rule (lib/retention/rules.ts), read against prisma/schema.prisma as
// Prisma reads it (tests/helpers/prisma-dmmf.ts): a model added without a rule fails here, and so
// does a rule for a table that is gone, a window on a column the table lacks or without the index
// the batched purge walks, and a table docs/data-retention.md does not name.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { RETENTION_RULES, retentionRules, windowRules } from "@/lib/retention/rules";
import { SYNCED_RESOURCES } from "@/lib/sync/resources";
import { retentionShape } from "@/lib/env/retention";
import { syncShape } from "@/lib/env/sync";
import { signInShape } from "@/lib/env/sign-in";
import { SCHEMA_PATH, loadDatamodel, type Datamodel, type Model } from "../helpers/prisma-dmmf";

const tableOf = (model: Model) => model.dbName ?? model.name;
const columnOf = (model: Model, fieldName: string) => {
  const field = model.fields.find((f) => f.name === fieldName);
  return field?.dbName ?? field?.name ?? fieldName;
};

/** The tables of a schema that have no rule: what the test below must find empty. */
function tablesWithoutRule(datamodel: Datamodel): string[] {
  const rules = retentionRules();
  return datamodel.models.map(tableOf).filter((table) => !Object.hasOwn(rules, table));
}

let datamodel: Datamodel;
beforeAll(async () => {
  datamodel = await loadDatamodel();
}, 60_000);

describe("retention rules", () => {
  it("every table of the schema has a rule, and every rule names a table of the schema", () => {
    const tables = datamodel.models.map(tableOf);
    expect(tables.length).toBeGreaterThan(10);
    expect(tablesWithoutRule(datamodel)).toEqual([]);
    expect(Object.keys(retentionRules()).filter((table) => !tables.includes(table))).toEqual([]);
  });

  it("covers each synced resource's table through the registry, so a resource npm run new:resource adds has its rule", () => {
    for (const { table } of SYNCED_RESOURCES) expect(retentionRules()[table]?.purge, table).toEqual({ kind: "install-data" });
  });

  it("finds a table added to the schema without a rule", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "retention-rules-"));
    try {
      const schema = `${await readFile(SCHEMA_PATH, "utf8")}
model ExportJob {
  id          String   @id @default(uuid()) @db.Uuid
  requestedAt DateTime @map("requested_at") @db.Timestamptz(3)

  @@map("export_jobs")
}
`;
      await writeFile(path.join(dir, "schema.prisma"), schema);
      expect(tablesWithoutRule(await loadDatamodel(path.join(dir, "schema.prisma")))).toEqual(["export_jobs"]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("each window names its table's columns, a setting that exists, and an index the batched purge walks", () => {
    const settings = { ...retentionShape, ...syncShape, ...signInShape };
    expect(windowRules().map(({ table }) => table).sort()).toEqual([
      "alert_digests",
      "install_events",
      "refresh_attempts",
      "staff_actions",
      "sync_days",
      "sync_runs",
      "webhook_deliveries",
    ]);
    for (const { table, rule } of windowRules()) {
      const model = datamodel.models.find((m) => tableOf(m) === table)!;
      const columns = model.fields.filter((f) => f.kind !== "object").map((f) => f.dbName ?? f.name);
      expect(columns, table).toContain(rule.timeColumn);
      expect(columns, table).toContain(rule.idColumn);
      expect(Object.keys(retentionShape), table).toContain(rule.setting);
      // The cursor's cast: a uuid column, or a sequence (BigInt).
      const idField = model.fields.find((f) => (f.dbName ?? f.name) === rule.idColumn)!;
      expect(idField.type === "BigInt" ? "bigint" : idField.nativeType?.[0] === "Uuid" ? "uuid" : idField.type, `${table}.${rule.idColumn}`).toBe(rule.idType);
      const indexes = datamodel.indexes.filter((index) => index.model === model.name).map((index) => index.fields.map((f) => columnOf(model, f.name)));
      // The walk: (time, id), oldest first (a descending index is read backwards).
      expect(indexes, table).toContainEqual([rule.timeColumn, rule.idColumn]);
      // The "newer row of the group" probe: an index on the group's first column and the time.
      if (rule.keepNewestPer) {
        const group = rule.keepNewestPer.columns;
        expect(
          indexes.some((fields) => fields[0] === group[0] && fields.at(-1) === rule.timeColumn),
          `${table}: an index (${group[0]}, …, ${rule.timeColumn})`,
        ).toBe(true);
      }
    }
    for (const [table, rule] of Object.entries(retentionRules())) {
      if (rule.setting !== null) expect(Object.keys(settings), table).toContain(rule.setting);
    }
  });

  it("a table whose rows go with their parent's names a window table that cascades to it, with an index to find them by", () => {
    const children = Object.entries(retentionRules()).flatMap(([table, rule]) => (rule.purge.kind === "with-parent" ? [{ table, parent: rule.purge.parent }] : []));
    expect(children.map(({ table }) => table)).toEqual(["alert_digest_members"]);
    for (const { table, parent } of children) {
      expect(windowRules().map((entry) => entry.table), table).toContain(parent);
      const model = datamodel.models.find((m) => tableOf(m) === table)!;
      const parentModel = datamodel.models.find((m) => tableOf(m) === parent)!;
      const relation = model.fields.find((f) => f.kind === "object" && f.type === parentModel.name);
      expect(relation?.relationOnDelete, `${table} → ${parent}`).toBe("Cascade");
      // The cascade finds a parent's rows by an index that starts with the foreign key.
      const foreignKey = columnOf(model, relation!.relationFromFields![0]!);
      const indexes = datamodel.indexes.filter((index) => index.model === model.name).map((index) => index.fields.map((f) => columnOf(model, f.name)));
      expect(indexes.some((fields) => fields[0] === foreignKey), `${table}: an index starting with ${foreignKey}`).toBe(true);
    }
  });

  it("docs/data-retention.md names every table of the list and every setting (the synced tables in one row, with the registry)", async () => {
    const doc = await readFile(path.join(__dirname, "../../docs/data-retention.md"), "utf8");
    for (const [table, rule] of Object.entries(RETENTION_RULES)) {
      expect(doc, table).toContain(`\`${table}\``);
      if (rule.setting) expect(doc, table).toContain(`\`${rule.setting}\``);
    }
  });
});
