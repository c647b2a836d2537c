// Compares what prisma/schema.prisma declares (Prisma's own DMMF, tests/helpers/prisma-dmmf.ts) with
// what a migrated database has (PostgreSQL's catalog), and lists every difference in one sentence each.
//
// Why: the migrations are written by hand (`prisma migrate dev` needs Prisma's schema engine, which
// some machines cannot download: lib/db/migrate.ts), so nothing else notices a migration that forgets
// a column, an index, a NOT NULL or an ON DELETE the schema declares, or a table the schema lost. The
// generated client trusts the schema; the database answers with what the migrations made.
//
// What it checks, per model (under its @@map/@map names): each scalar field's column, its type
// (Prisma type or `@db.*` native type), nullability and database default; the primary key (@id/@@id),
// unique indexes (@unique/@@unique) and @@index indexes, by name (Prisma's default names, or `map:`),
// with their columns, order, sort direction and method (`type: Hash`, ...); each relation's foreign key (columns, referenced table
// and columns, ON DELETE and ON UPDATE, Prisma's defaults when the schema declares none); and each
// enum's values in order. What the database has beyond that (tables, views, columns, indexes, foreign
// keys, check constraints, enums) is a difference too, unless the caller lists it as made on purpose.
// Not compared: foreign key names (found by their columns instead), triggers, functions, sequences.
import type pg from "pg";
import type { Datamodel, Field, Model } from "./prisma-dmmf";

/** Objects made on purpose by raw SQL only, by key (as the differences name them) → why. */
export type AllowedExtras = Record<string, string>;

const IGNORED_SCHEMAS = [
  "pg_catalog",
  "information_schema",
  // pg-boss creates and migrates its own tables at start-up (lib/jobs), outside prisma/migrations.
  "pgboss",
];
// Prisma Migrate's bookkeeping, which lib/db/migrate.ts keeps exactly as Prisma does.
const IGNORED_TABLES = ["public._prisma_migrations"];

// ----- what the schema says -------------------------------------------------------------------

interface Column {
  type: string;
  notNull: boolean;
  /** The default's SQL as PostgreSQL prints it (pg_get_expr), null for none. */
  default: string | null;
}

interface IndexShape {
  table: string;
  /** e.g. `unique (install_id)`, `primary key (minute, reason)`, `(received_at DESC, id DESC)`. */
  shape: string;
}

interface ForeignKey {
  table: string;
  columns: string[];
  /** e.g. `installs (id) ON DELETE CASCADE ON UPDATE CASCADE` */
  target: string;
}

interface Shape {
  tables: Set<string>;
  views: Set<string>;
  columns: Map<string, Column>; // `table.column`
  indexes: Map<string, IndexShape>; // `table.index_name`
  foreignKeys: Map<string, ForeignKey>; // `table (col, ...)`
  constraints: Set<string>; // check and exclusion constraints, `table.name`
  enums: Map<string, string[]>;
}

const tableName = (schema: string | null | undefined, name: string) =>
  !schema || schema === "public" ? name : `${schema}.${name}`;
const modelTable = (model: Model) => tableName(model.schema, model.dbName ?? model.name);
const columnName = (field: Field) => field.dbName ?? field.name;

// @db.* native types as PostgreSQL's format_type() prints them; `p` is the type's arguments.
const NATIVE_TYPES: Record<string, (p: string[]) => string> = {
  Text: () => "text",
  Char: (p) => `character(${p[0] ?? 1})`,
  VarChar: (p) => (p.length ? `character varying(${p[0]})` : "character varying"),
  Bit: (p) => `bit(${p[0] ?? 1})`,
  VarBit: (p) => (p.length ? `bit varying(${p[0]})` : "bit varying"),
  Uuid: () => "uuid",
  Xml: () => "xml",
  Inet: () => "inet",
  Citext: () => "citext",
  Integer: () => "integer",
  SmallInt: () => "smallint",
  Oid: () => "oid",
  BigInt: () => "bigint",
  DoublePrecision: () => "double precision",
  Real: () => "real",
  Decimal: (p) => (p.length ? `numeric(${p.join(",")})` : "numeric"),
  Money: () => "money",
  Timestamp: (p) => `timestamp(${p[0] ?? 3}) without time zone`,
  Timestamptz: (p) => `timestamp(${p[0] ?? 3}) with time zone`,
  Date: () => "date",
  Time: (p) => `time(${p[0] ?? 3}) without time zone`,
  Timetz: (p) => `time(${p[0] ?? 3}) with time zone`,
  Boolean: () => "boolean",
  Json: () => "json",
  JsonB: () => "jsonb",
  ByteA: () => "bytea",
};

// Each Prisma scalar type's column type when the field has no @db.* attribute (Prisma's defaults).
const SCALAR_TYPES: Record<string, string> = {
  String: "text",
  Int: "integer",
  BigInt: "bigint",
  Float: "double precision",
  Decimal: "numeric(65,30)",
  DateTime: "timestamp(3) without time zone",
  Boolean: "boolean",
  Json: "jsonb",
  Bytes: "bytea",
};

function columnType(field: Field, datamodel: Datamodel): string {
  let type: string;
  if (field.kind === "enum") {
    const enumType = datamodel.enums.find((candidate) => candidate.name === field.type);
    type = enumType?.dbName ?? field.type;
  } else if (field.kind === "unsupported") {
    type = field.type.replace(/^Unsupported\("(.*)"\)$/, "$1");
  } else if (field.nativeType) {
    const [name, args] = field.nativeType;
    const format = NATIVE_TYPES[name];
    if (!format) throw new Error(`@db.${name} (${field.name}) is not in NATIVE_TYPES: add how PostgreSQL prints it`);
    type = format(args);
  } else {
    const scalar = SCALAR_TYPES[field.type];
    if (!scalar) throw new Error(`Prisma type ${field.type} (${field.name}) is not in SCALAR_TYPES: add its column type`);
    type = scalar;
  }
  return field.isList ? `${type}[]` : type;
}

const NUMERIC_SCALARS = new Set(["Int", "BigInt", "Float", "Decimal"]);

/**
 * The default as the comparison writes it: PostgreSQL's pg_get_expr() text, with numbers bare (it
 * prints `'-1'::integer` or `'0'::bigint` depending on the type and sign; see databaseDefault). Null
 * when there is no database default, or when Prisma's client fills the value (uuid(), cuid(), ...).
 * A `dbgenerated("...")` expression is compared as written: write it as PostgreSQL prints it back.
 */
function columnDefault(field: Field, type: string): string | null {
  if (!field.hasDefaultValue || field.default === undefined) return null;
  const value = field.default;
  if (typeof value === "object" && value !== null && !Array.isArray(value) && "name" in value) {
    const fn = value as { name: string; args: unknown[] };
    if (fn.name === "now") return "CURRENT_TIMESTAMP";
    if (fn.name === "autoincrement") return "nextval(…)";
    if (fn.name === "dbgenerated") return typeof fn.args[0] === "string" ? fn.args[0] : null;
    return null; // uuid(), cuid(), nanoid(), ulid(): generated by the client, no database default
  }
  const elementType = type.replace(/\[\]$/, "");
  // PostgreSQL casts a literal to the type without its modifiers: 'x'::character varying.
  const literal = (item: unknown): string => {
    if (field.kind === "scalar" && NUMERIC_SCALARS.has(field.type)) return String(item);
    if (typeof item === "boolean") return String(item);
    const text = typeof item === "string" ? item : JSON.stringify(item);
    return `'${text.replaceAll("'", "''")}'::${elementType.replace(/\(.*?\)/g, "")}`;
  };
  if (Array.isArray(value)) {
    return value.length ? `ARRAY[${value.map(literal).join(", ")}]` : `ARRAY[]::${type.replace(/\(.*?\)/g, "")}`;
  }
  return literal(value);
}

/** A column default as pg_get_expr() prints it, with numeric literals bare (`'-1'::integer` → `-1`). */
function databaseDefault(text: string | null): string | null {
  if (text === null) return null;
  if (text.startsWith("nextval(")) return "nextval(…)";
  const number = /^'?(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)'?(?:::(?:smallint|integer|bigint|numeric|real|double precision))?$/i.exec(text);
  return number ? number[1]! : text;
}

/** Prisma's default constraint and index names (ConstraintNames in its schema engine). */
function defaultName(table: string, columns: string[], suffix: "pkey" | "key" | "idx"): string {
  const bare = table.includes(".") ? table.slice(table.indexOf(".") + 1) : table;
  const prefix = suffix === "pkey" ? bare : `${bare}_${columns.join("_")}`;
  const max = 63 - suffix.length - 1; // PostgreSQL's identifier limit
  return `${prefix.slice(0, max)}_${suffix}`;
}

const REFERENTIAL_ACTIONS: Record<string, string> = {
  Cascade: "CASCADE",
  Restrict: "RESTRICT",
  NoAction: "NO ACTION",
  SetNull: "SET NULL",
  SetDefault: "SET DEFAULT",
};

function emptyShape(): Shape {
  return { tables: new Set(), views: new Set(), columns: new Map(), indexes: new Map(), foreignKeys: new Map(), constraints: new Set(), enums: new Map() };
}

export function expectedShape(datamodel: Datamodel): Shape {
  const shape = emptyShape();
  const modelByName = new Map(datamodel.models.map((model) => [model.name, model]));
  const fieldColumn = (model: Model, fieldName: string) => {
    const field = model.fields.find((candidate) => candidate.name === fieldName);
    if (!field) throw new Error(`${model.name} has no field ${fieldName}`);
    return columnName(field);
  };

  for (const model of datamodel.models) {
    const table = modelTable(model);
    shape.tables.add(table);
    for (const field of model.fields) {
      if (field.kind === "object") {
        if (!field.relationFromFields?.length) continue; // the other side of a relation holds no column
        const target = modelByName.get(field.type)!;
        const columns = field.relationFromFields.map((name) => fieldColumn(model, name));
        const targetColumns = (field.relationToFields ?? []).map((name) => fieldColumn(target, name));
        // Prisma's defaults: Restrict for a required relation, SetNull for an optional one; Cascade on update.
        const onDelete = REFERENTIAL_ACTIONS[field.relationOnDelete ?? (field.isRequired ? "Restrict" : "SetNull")];
        const onUpdate = REFERENTIAL_ACTIONS[field.relationOnUpdate ?? "Cascade"];
        shape.foreignKeys.set(`${table} (${columns.join(", ")})`, {
          table,
          columns,
          target: `${modelTable(target)} (${targetColumns.join(", ")}) ON DELETE ${onDelete} ON UPDATE ${onUpdate}`,
        });
        continue;
      }
      const type = columnType(field, datamodel);
      shape.columns.set(`${table}.${columnName(field)}`, {
        type,
        // A list is nullable in PostgreSQL: Prisma declares it without NOT NULL (an empty list is `{}`).
        notNull: field.isRequired && !field.isList,
        default: columnDefault(field, type),
      });
    }
  }

  for (const index of datamodel.indexes) {
    if (index.type === "fulltext") continue; // MySQL only
    const model = modelByName.get(index.model)!;
    const table = modelTable(model);
    const columns = index.fields.map((field) => fieldColumn(model, field.name));
    const suffix = index.type === "id" ? "pkey" : index.type === "unique" ? "key" : "idx";
    const name = index.dbName ?? defaultName(table, columns, suffix);
    const list = index.fields
      .map((field, i) => `${columns[i]}${field.sortOrder === "desc" ? " DESC" : ""}`)
      .join(", ");
    const kind = index.type === "id" ? "primary key " : index.type === "unique" ? "unique " : "";
    const method = index.algorithm && index.algorithm !== "BTree" ? ` USING ${index.algorithm.toLowerCase()}` : "";
    shape.indexes.set(`${table}.${name}`, { table, shape: `${kind}(${list})${method}` });
  }

  for (const enumType of datamodel.enums) {
    shape.enums.set(
      enumType.dbName ?? enumType.name,
      enumType.values.map((value) => value.dbName ?? value.name),
    );
  }
  return shape;
}

// ----- what the database has ------------------------------------------------------------------

const ACTIONS: Record<string, string> = { a: "NO ACTION", r: "RESTRICT", c: "CASCADE", n: "SET NULL", d: "SET DEFAULT" };

export async function databaseShape(client: pg.Client | pg.PoolClient): Promise<Shape> {
  const params = [IGNORED_SCHEMAS, IGNORED_TABLES];
  // Relations this comparison covers: ordinary and partitioned tables, views, in schemas not ignored.
  const scope = `n.nspname <> ALL($1::text[]) AND n.nspname NOT LIKE 'pg\\_%'
    AND (n.nspname || '.' || c.relname) <> ALL($2::text[])`;

  const shape = emptyShape();

  const relations = await client.query<{ schema: string; name: string; kind: string }>(
    `SELECT n.nspname AS schema, c.relname AS name, c.relkind AS kind
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p', 'v', 'm') AND ${scope}`,
    params,
  );
  for (const row of relations.rows) {
    (row.kind === "v" || row.kind === "m" ? shape.views : shape.tables).add(tableName(row.schema, row.name));
  }

  const columns = await client.query<{ schema: string; table: string; column: string; type: string; not_null: boolean; default: string | null }>(
    `SELECT n.nspname AS schema, c.relname AS table, a.attname AS column,
            format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null,
            pg_get_expr(d.adbin, d.adrelid) AS default
       FROM pg_attribute a
       JOIN pg_class c ON c.oid = a.attrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'p') AND ${scope}`,
    params,
  );
  for (const row of columns.rows) {
    shape.columns.set(`${tableName(row.schema, row.table)}.${row.column}`, {
      type: row.type.replaceAll('"', ""),
      notNull: row.not_null,
      default: databaseDefault(row.default),
    });
  }

  const indexes = await client.query<{ schema: string; table: string; name: string; primary: boolean; unique: boolean; method: string; columns: string[]; predicate: string | null }>(
    `SELECT n.nspname AS schema, c.relname AS table, i.relname AS name,
            x.indisprimary AS primary, x.indisunique AS unique, am.amname AS method,
            array(SELECT coalesce(a.attname::text, pg_get_indexdef(x.indexrelid, k.ord::int, true))
                         || CASE WHEN (x.indoption[k.ord - 1] & 1) = 1 THEN ' DESC' ELSE '' END
                    FROM unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
                    LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum AND k.attnum > 0
                   WHERE k.ord <= x.indnkeyatts
                   ORDER BY k.ord) AS columns,
            pg_get_expr(x.indpred, x.indrelid) AS predicate
       FROM pg_index x
       JOIN pg_class i ON i.oid = x.indexrelid
       JOIN pg_am am ON am.oid = i.relam
       JOIN pg_class c ON c.oid = x.indrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE ${scope}`,
    params,
  );
  for (const row of indexes.rows) {
    const table = tableName(row.schema, row.table);
    const kind = row.primary ? "primary key " : row.unique ? "unique " : "";
    const method = row.method === "btree" ? "" : ` USING ${row.method}`;
    const where = row.predicate ? ` WHERE ${row.predicate}` : "";
    shape.indexes.set(`${table}.${row.name}`, { table, shape: `${kind}(${row.columns.join(", ")})${method}${where}` });
  }

  const constraints = await client.query<{ schema: string; table: string; name: string; type: string; columns: string[]; target: string | null; target_columns: string[] | null; on_delete: string; on_update: string }>(
    `SELECT n.nspname AS schema, c.relname AS table, con.conname AS name, con.contype AS type,
            array(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
                    JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum ORDER BY k.ord) AS columns,
            CASE WHEN tn.nspname = 'public' THEN t.relname ELSE tn.nspname || '.' || t.relname END AS target,
            array(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY AS k(attnum, ord)
                    JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum ORDER BY k.ord) AS target_columns,
            con.confdeltype AS on_delete, con.confupdtype AS on_update
       FROM pg_constraint con
       JOIN pg_class c ON c.oid = con.conrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_class t ON t.oid = con.confrelid
       LEFT JOIN pg_namespace tn ON tn.oid = t.relnamespace
      WHERE con.contype IN ('f', 'c', 'x') AND ${scope}`,
    params,
  );
  for (const row of constraints.rows) {
    const table = tableName(row.schema, row.table);
    if (row.type === "f") {
      shape.foreignKeys.set(`${table} (${row.columns.join(", ")})`, {
        table,
        columns: row.columns,
        target: `${row.target} (${(row.target_columns ?? []).join(", ")}) ON DELETE ${ACTIONS[row.on_delete]} ON UPDATE ${ACTIONS[row.on_update]}`,
      });
    } else {
      // NOT NULL is a column property above; a CHECK or EXCLUDE constraint is something Prisma cannot declare.
      shape.constraints.add(`${table}.${row.name}`);
    }
  }

  const enums = await client.query<{ schema: string; name: string; values: string[] }>(
    `SELECT n.nspname AS schema, t.typname AS name, array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS values
       FROM pg_type t
       JOIN pg_enum e ON e.enumtypid = t.oid
       JOIN pg_namespace n ON n.oid = t.typnamespace
      WHERE n.nspname <> ALL($1::text[])
      GROUP BY n.nspname, t.typname`,
    [IGNORED_SCHEMAS],
  );
  for (const row of enums.rows) shape.enums.set(tableName(row.schema, row.name), row.values);

  return shape;
}

// ----- the comparison -------------------------------------------------------------------------

/**
 * Every difference between the schema and the database, one sentence each, sorted; [] when none.
 * An object only in the database is a difference unless `allowedExtras` names it (by the key its
 * sentence starts with, e.g. `index installs.installs_one_live_per_operator`); an allowed extra that
 * the database no longer has is a difference too, so the list never keeps a stale excuse.
 */
export function compareShapes(schema: Shape, database: Shape, allowedExtras: AllowedExtras = {}): string[] {
  const differences: string[] = [];
  const usedExtras = new Set<string>();
  const onlyInDatabase = (key: string) => {
    if (key in allowedExtras) usedExtras.add(key);
    else differences.push(`${key}: in the database, not in the schema`);
  };
  const onlyInSchema = (key: string) => differences.push(`${key}: in the schema, not in the database`);

  for (const table of schema.tables) {
    if (!database.tables.has(table)) onlyInSchema(`table ${table}`);
  }
  for (const table of database.tables) {
    if (!schema.tables.has(table)) onlyInDatabase(`table ${table}`);
  }
  for (const view of database.views) onlyInDatabase(`view ${view}`);

  for (const [key, expected] of schema.columns) {
    const actual = database.columns.get(key);
    const table = key.slice(0, key.lastIndexOf("."));
    if (!actual) {
      if (database.tables.has(table)) onlyInSchema(`column ${key}`);
      continue;
    }
    if (actual.type !== expected.type) {
      differences.push(`column ${key}: type is ${expected.type} in the schema, ${actual.type} in the database`);
    }
    if (actual.notNull !== expected.notNull) {
      const say = (notNull: boolean) => (notNull ? "NOT NULL" : "nullable");
      differences.push(`column ${key}: ${say(expected.notNull)} in the schema, ${say(actual.notNull)} in the database`);
    }
    if (actual.default !== expected.default) {
      const say = (value: string | null) => value ?? "no default";
      differences.push(`column ${key}: default is ${say(expected.default)} in the schema, ${say(actual.default)} in the database`);
    }
  }
  for (const key of database.columns.keys()) {
    const table = key.slice(0, key.lastIndexOf("."));
    if (schema.tables.has(table) && !schema.columns.has(key)) onlyInDatabase(`column ${key}`);
  }

  for (const [key, expected] of schema.indexes) {
    const actual = database.indexes.get(key);
    if (!actual) {
      if (database.tables.has(expected.table)) onlyInSchema(`index ${key} ${expected.shape}`);
    } else if (actual.shape !== expected.shape) {
      differences.push(`index ${key}: ${expected.shape} in the schema, ${actual.shape} in the database`);
    }
  }
  for (const [key, actual] of database.indexes) {
    if (schema.tables.has(actual.table) && !schema.indexes.has(key)) onlyInDatabase(`index ${key}`);
  }

  for (const [key, expected] of schema.foreignKeys) {
    const actual = database.foreignKeys.get(key);
    if (!actual) {
      if (database.tables.has(expected.table)) onlyInSchema(`foreign key ${key} -> ${expected.target}`);
    } else if (actual.target !== expected.target) {
      differences.push(`foreign key ${key}: -> ${expected.target} in the schema, -> ${actual.target} in the database`);
    }
  }
  for (const [key, actual] of database.foreignKeys) {
    if (schema.tables.has(actual.table) && !schema.foreignKeys.has(key)) onlyInDatabase(`foreign key ${key}`);
  }

  for (const key of database.constraints) onlyInDatabase(`constraint ${key}`);

  for (const [name, values] of schema.enums) {
    const actual = database.enums.get(name);
    if (!actual) onlyInSchema(`enum ${name}`);
    else if (actual.join(", ") !== values.join(", ")) {
      differences.push(`enum ${name}: (${values.join(", ")}) in the schema, (${actual.join(", ")}) in the database`);
    }
  }
  for (const name of database.enums.keys()) {
    if (!schema.enums.has(name)) onlyInDatabase(`enum ${name}`);
  }

  for (const key of Object.keys(allowedExtras)) {
    if (!usedExtras.has(key)) differences.push(`${key}: listed as made on purpose, but not in the database`);
  }
  return differences.sort();
}

/** The differences between Prisma's datamodel and the database `client` is connected to. */
export async function schemaDrift(
  datamodel: Datamodel,
  client: pg.Client | pg.PoolClient,
  allowedExtras: AllowedExtras = {},
): Promise<string[]> {
  return compareShapes(expectedShape(datamodel), await databaseShape(client), allowedExtras);
}
