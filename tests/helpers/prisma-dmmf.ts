// prisma/schema.prisma as Prisma itself reads it (its DMMF: models, fields, native types, indexes,
// relations, enums), for tests that compare it with something else. Never a regex on the file.
//
// How: `prisma generate` hands every generator the DMMF, so we run it on a copy of the schema with one
// more generator (tests/helpers/prisma-dmmf-generator.mjs) that writes it to a file, and only that
// generator (`--generator`), so lib/db/generated is left alone. `@prisma/internals`' getDMMF would be
// shorter, but Prisma 7's CLI bundles it rather than installing it, and we add no dependency for a test.
import { execFile } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const require = createRequire(import.meta.url);

export const SCHEMA_PATH = fileURLToPath(new URL("../../prisma/schema.prisma", import.meta.url));
const GENERATOR_PATH = fileURLToPath(new URL("./prisma-dmmf-generator.mjs", import.meta.url));
const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The parts of Prisma's DMMF the schema comparison reads (Prisma's DMMF.Datamodel, narrowed). */
export interface Datamodel {
  models: Model[];
  enums: { name: string; dbName?: string | null; values: { name: string; dbName?: string | null }[] }[];
  indexes: Index[];
}

export interface Model {
  name: string;
  dbName: string | null;
  schema?: string | null;
  fields: Field[];
}

export interface Field {
  name: string;
  dbName?: string | null;
  kind: "scalar" | "object" | "enum" | "unsupported";
  type: string;
  isList: boolean;
  isRequired: boolean;
  isUpdatedAt: boolean;
  hasDefaultValue: boolean;
  /** e.g. `["Timestamptz", ["3"]]` for `@db.Timestamptz(3)`; null without `@db.*`. */
  nativeType?: [string, string[]] | null;
  /** A literal (`0`, `false`, `"ACTIVE"`), or a function such as `{ name: "now", args: [] }`. */
  default?: unknown;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
  relationOnUpdate?: string;
}

export interface Index {
  model: string;
  type: "id" | "unique" | "normal" | "fulltext";
  /** The `map:` name, when the schema gives one. */
  dbName?: string | null;
  /** `type:` of @@index (BTree when not given): BTree, Hash, Gist, Gin, SpGist, Brin. */
  algorithm?: string;
  fields: { name: string; sortOrder?: "asc" | "desc" }[];
}

/** Finds the prisma CLI, and what it needs to start on a machine without Prisma's schema engine. */
function prismaCommand(): { bin: string; env: NodeJS.ProcessEnv } {
  const bin = path.join(path.dirname(require.resolve("prisma/package.json")), "build", "index.js");
  const env: NodeJS.ProcessEnv = { ...process.env, CHECKPOINT_DISABLE: "1", PRISMA_HIDE_UPDATE_MESSAGE: "1" };
  // As in scripts/prisma-generate.mjs: generate refuses to start without an engine file, though it never runs it.
  const enginesDir = path.dirname(require.resolve("@prisma/engines/package.json"));
  if (!env.PRISMA_SCHEMA_ENGINE_BINARY && !readdirSync(enginesDir).some((name) => name.startsWith("schema-engine"))) {
    env.PRISMA_SCHEMA_ENGINE_BINARY = process.execPath;
  }
  return { bin, env };
}

/** Prisma's datamodel of the schema at `schemaPath` (prisma/schema.prisma by default). */
export async function loadDatamodel(schemaPath: string = SCHEMA_PATH): Promise<Datamodel> {
  const dir = await mkdtemp(path.join(tmpdir(), "prisma-dmmf-"));
  try {
    const schemaCopy = path.join(dir, "schema.prisma");
    const output = path.join(dir, "dmmf.json");
    const generator = `\n\ngenerator schema_drift_dmmf {\n  provider = ${JSON.stringify(`node ${JSON.stringify(GENERATOR_PATH)}`)}\n}\n`;
    await writeFile(schemaCopy, (await readFile(schemaPath, "utf8")) + generator);

    const { bin, env } = prismaCommand();
    try {
      await run(process.execPath, [bin, "generate", "--schema", schemaCopy, "--generator", "schema_drift_dmmf"], {
        env: { ...env, PRISMA_DMMF_OUTPUT: output },
        cwd: REPO_ROOT, // where prisma.config.ts is
      });
    } catch (error) {
      const { stdout, stderr } = error as { stdout?: string; stderr?: string };
      throw new Error(`prisma generate failed to hand over the DMMF:\n${stdout ?? ""}\n${stderr ?? ""}`, { cause: error });
    }
    if (!existsSync(output)) throw new Error("prisma generate ran, but the DMMF generator wrote nothing");
    return (JSON.parse(await readFile(output, "utf8")) as { datamodel: Datamodel }).datamodel;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
