// The fields `npm run new:resource -- <name> --field startsAt:timestamp ...` keeps as columns: what
// each type is in every layer (the model, the migration, `toRow`, `upsert`, the page's read, the page,
// the sandbox's records, the tests), and the snippets of the templates that depend on them
// (`fieldTokens`). Without fields every snippet is empty and the resource keeps `name` only.

export const FIELD_TYPES = ["text", "integer", "decimal", "boolean", "timestamp"] as const;
export type FieldType = (typeof FIELD_TYPES)[number];
/** Other spellings a developer may reach for. */
const ALIASES: Record<string, FieldType> = { number: "decimal", string: "text", int: "integer", bool: "boolean", datetime: "timestamp" };

export type Field = {
  /** camelCase: the record's key in the API (as public-facts.md's records are) and the model's field. */
  name: string;
  /** snake_case: the column, as the other synced tables name theirs (`max_kw`, `started_at`). */
  column: string;
  /** The column's header on the page: "Starts at". */
  label: string;
  type: FieldType;
};

export class FieldError extends Error {}

const CAMEL = /^[a-z][a-zA-Z0-9]*$/;
const MAX_NAME = 40;
/** The columns every synced table has (the model template), and `id`, which is the record's. */
const TAKEN = new Set(["id", "name", "raw", "install", "installRowId", "externalId", "seenPassId", "seenPage", "firstSeenAt", "lastSeenAt", "updatedAt", "deletedAt"]);
/**
 * PostgreSQL's reserved key words (reserved, and reserved "can be function or type"): not a column
 * name without quotes, and `upsert` writes its columns unquoted, as the other resources do.
 */
const RESERVED = new Set(
  (
    "all analyse analyze and any array as asc asymmetric authorization binary both case cast check collate collation column concurrently constraint create " +
    "cross current_catalog current_date current_role current_schema current_time current_timestamp current_user default deferrable desc distinct do else end " +
    "except false fetch for foreign freeze from full grant group having ilike in initially inner intersect into is isnull join lateral leading left like limit " +
    "localtime localtimestamp natural not notnull null offset on only or order outer overlaps placing primary references returning right select session_user " +
    "similar some symmetric system_user table tablesample then to trailing true union unique user using variadic verbose when where window with"
  ).split(" "),
);

const snakeOf = (name: string) =>
  name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z])([A-Z][a-z])/g, "$1_$2")
    .toLowerCase();

/** One `--field name:type`. */
export function parseField(spec: string): Field {
  const [name = "", rawType, ...rest] = spec.split(":");
  if (rawType === undefined || rest.length > 0) throw new FieldError(`--field ${spec}: give it as <name>:<type>, e.g. --field startsAt:timestamp`);
  const type = (FIELD_TYPES as readonly string[]).includes(rawType) ? (rawType as FieldType) : ALIASES[rawType];
  if (!type) throw new FieldError(`--field ${spec}: "${rawType}" is not a type; use one of ${FIELD_TYPES.join(", ")} (number = decimal)`);
  if (!CAMEL.test(name) || name.length > MAX_NAME) throw new FieldError(`--field ${spec}: "${name}" is not a field name; use camelCase, as the API's records do (e.g. startsAt), up to ${MAX_NAME} characters`);
  if (TAKEN.has(name)) throw new FieldError(`--field ${spec}: every synced table has "${name}" already; name the field otherwise`);
  const column = snakeOf(name);
  if (RESERVED.has(column)) throw new FieldError(`--field ${spec}: "${column}" is a reserved word in PostgreSQL; name the field otherwise (e.g. ${name}At or ${name}Value)`);
  const words = column.split("_").join(" ");
  return { name, column, label: words[0]!.toUpperCase() + words.slice(1), type };
}

export function parseFields(specs: readonly string[]): Field[] {
  const fields = specs.map(parseField);
  for (const [i, field] of fields.entries()) {
    if (fields.findIndex((other) => other.column === field.column) !== i) throw new FieldError(`--field ${field.name}: given twice (or two names make the column ${field.column})`);
  }
  return fields;
}

/** Each type in each layer. */
const LAYERS: Record<
  FieldType,
  { prisma: string; sql: string; recordset: string; row: string; read: string; item: string; sandbox: string; right: boolean }
> = {
  text: { prisma: "String?", sql: "TEXT", recordset: "text", row: "string | null", read: "text", item: "string | null", sandbox: "string", right: false },
  integer: { prisma: "Int?", sql: "INTEGER", recordset: "integer", row: "number | null", read: "integer", item: "number | null", sandbox: "number", right: true },
  // The precision of the money columns (synced_charges.price): an amount loses no cent.
  decimal: { prisma: "Decimal?", sql: "DECIMAL(19,4)", recordset: "numeric", row: "number | null", read: "num", item: "number | null", sandbox: "number", right: true },
  boolean: { prisma: "Boolean?", sql: "BOOLEAN", recordset: "boolean", row: "boolean | null", read: "bool", item: "boolean | null", sandbox: "boolean", right: false },
  timestamp: { prisma: "DateTime?", sql: "TIMESTAMPTZ(3)", recordset: "timestamptz", row: "string | null", read: "timestamp", item: "Date | null", sandbox: "string", right: false },
};

const prismaAttributes = (field: Field) =>
  [field.column !== field.name ? `@map("${field.column}")` : "", field.type === "decimal" ? "@db.Decimal(19, 4)" : field.type === "timestamp" ? "@db.Timestamptz(3)" : ""]
    .filter(Boolean)
    .join(" ");

/** The model's fields, aligned as `prisma format` aligns them. */
function modelFields(fields: readonly Field[]): string {
  const rows: [string, string, string][] = [
    ["installRowId", "String", '@map("install_row_id") @db.Uuid'],
    ["install", "Install", "@relation(fields: [installRowId], references: [id], onDelete: Cascade)"],
    ["externalId", "String", '@map("external_id")'],
    ["name", "String?", ""],
    ...fields.map((field): [string, string, string] => [field.name, LAYERS[field.type].prisma, prismaAttributes(field)]),
    ["raw", "Json", ""],
    ["seenPassId", "String?", '@map("seen_pass_id") @db.Uuid'],
    ["seenPage", "Int?", '@map("seen_page")'],
    ["firstSeenAt", "DateTime", '@map("first_seen_at") @db.Timestamptz(3)'],
    ["lastSeenAt", "DateTime", '@map("last_seen_at") @db.Timestamptz(3)'],
    ["updatedAt", "DateTime", '@map("updated_at") @db.Timestamptz(3)'],
    ["deletedAt", "DateTime?", '@map("deleted_at") @db.Timestamptz(3)'],
  ];
  const nameWidth = Math.max(...rows.map(([name]) => name.length)) + 1;
  const typeWidth = Math.max(...rows.filter(([, , attributes]) => attributes).map(([, type]) => type.length)) + 1;
  return rows.map(([name, type, attributes]) => `  ${name.padEnd(nameWidth)}${attributes ? `${type.padEnd(typeWidth)}${attributes}` : type}`.trimEnd()).join("\n");
}

/** A sandbox record's value for the field: plausible for its type, from the operator's id and the record's index alone. */
function sandboxValue(field: Field, nth: number): string {
  switch (field.type) {
    case "text":
      return `\`${field.label.toLowerCase()} \${i + 1}\``;
    case "integer":
      return "(operator.operator.id % 10) * 10 + i";
    case "decimal":
      return "Math.round(((operator.operator.id % 100) + i * 7.25) * 100) / 100";
    case "boolean":
      return "i % 2 === 0";
    case "timestamp":
      // Instants in UTC as the service sends them (contract §4.2), at half past hours spread over the
      // day: in the operator's zone some fall on another hour and another day than in UTC.
      return `new Date(Date.UTC(2025, 0, 1 + i, ((operator.operator.id + i) * 7${nth ? ` + ${nth * 5}` : ""}) % 24, 30)).toISOString()`;
  }
}

/** The page's cell for the field, formatted through the operator's formatter (lib/i18n/format.ts). */
function pageCell(field: Field): string {
  const value = `item.${field.name}`;
  const cell = (className: string, content: string) => `          <td className="${className}" data-field="${field.name}">\n            ${content}\n          </td>`;
  switch (field.type) {
    case "text":
      return cell("px-3 py-2 break-words", `{${value} ?? "—"}`);
    case "integer":
    case "decimal":
      return cell("whitespace-nowrap px-3 py-2 text-right tabular-nums", `{f.decimal(${value})}`);
    case "boolean":
      return cell("px-3 py-2", `{${value} === null ? "—" : ${value} ? "Yes" : "No"}`);
    case "timestamp":
      return cell("whitespace-nowrap px-3 py-2", `{${value} ? <time dateTime={${value}.toISOString()}>{f.dateTime(${value})}</time> : "—"}`);
  }
}

/** What the section's tests expect in the field's cell, from the control API's `record` and the tests' formatter `format` (the template cells.ts). */
function expectedCell(field: Field): string {
  const value = `record.${field.name}`;
  switch (field.type) {
    case "text":
      return value;
    case "integer":
    case "decimal":
      return `format.decimal(${value})`;
    case "boolean":
      return `${value} ? "Yes" : "No"`;
    case "timestamp":
      return `format.dateTime(new Date(${value}))`;
  }
}

/**
 * A type or object literal on one line while it is short, else one entry a line (as the hand-written
 * resources are): `indent` is the literal's own indentation in its template.
 */
function literal(entries: readonly string[], separator: ";" | ",", indent: number): string {
  const line = `{ ${entries.join(`${separator} `)} }`;
  if (line.length <= 100) return line;
  const pad = " ".repeat(indent);
  return `{\n${entries.map((entry) => `${pad}  ${entry}${separator}\n`).join("")}${pad}}`;
}

/** The templates' field tokens (scripts/new-resource.ts `render`); without fields, the resource keeps `name` only. */
export function fieldTokens(fields: readonly Field[]): Record<string, string> {
  const counts = new Map<FieldType, number>();
  /** Each field's index among the fields of its type (the sandbox spreads their values). */
  const nths = fields.map((field) => {
    const nth = counts.get(field.type) ?? 0;
    counts.set(field.type, nth + 1);
    return nth;
  });
  const reads = [...new Set(fields.map((field) => LAYERS[field.type].read))];
  /** A SQL list's field columns, on a line of their own after `name` (none without fields). */
  const columns = [
    '{ label: "Name" }',
    ...fields.map((field) => `{ label: "${field.label}"${LAYERS[field.type].right ? ', className: "text-right"' : ""} }`),
    '{ label: "Changed", className: "hidden sm:table-cell" }',
  ];
  const sql = (column: (field: Field) => string) => (fields.length ? `,\n        ${fields.map(column).join(", ")}` : "");
  return {
    __modelFields__: modelFields(fields),
    __sqlColumns__: fields.map((field) => `    "${field.column}" ${LAYERS[field.type].sql},\n`).join(""),
    __syncImports__: ["defineSyncResource", "recordId", "text", ...reads.filter((read) => read !== "text")].sort().join(", "),
    __rowType__: literal(["name: string | null", ...fields.map((field) => `${field.column}: ${LAYERS[field.type].row}`)], ";", 0),
    __toRowFields__: fields.map((field) => `      ${field.column}: ${LAYERS[field.type].read}(record.${field.name}),\n`).join(""),
    __sqlNames__: sql((field) => field.column),
    __sqlRNames__: sql((field) => `r.${field.column}`),
    __sqlRecordset__: sql((field) => `${field.column} ${LAYERS[field.type].recordset}`),
    __sqlUpdates__: sql((field) => `${field.column} = EXCLUDED.${field.column}`),
    __itemType__: literal(["id: string", "name: string | null", ...fields.map((field) => `${field.name}: ${LAYERS[field.type].item}`), "updatedAt: Date"], ";", 0),
    __select__: literal(["externalId: true", "name: true", ...fields.map((field) => `${field.name}: true`), "updatedAt: true"], ",", 6),
    __item__: literal(
      [
        "id: row.externalId",
        "name: row.name",
        // Prisma reads a DECIMAL as a Decimal: the page formats a number.
        ...fields.map((field) => `${field.name}: ${field.type === "decimal" ? `row.${field.name} === null ? null : Number(row.${field.name})` : `row.${field.name}`}`),
        "updatedAt: row.updatedAt",
      ],
      ",",
      4,
    ),
    __columns__: fields.length === 0 ? `[${columns.join(", ")}]` : `[\n${columns.map((column) => `        ${column},\n`).join("")}      ]`,
    __cells__: fields.map((field) => `${pageCell(field)}\n`).join(""),
    __recordType__: literal(["id: number", "name: string", ...fields.map((field) => `${field.name}: ${LAYERS[field.type].sandbox}`)], ";", 0),
    __columnLabels__: JSON.stringify(["Name", ...fields.map((field) => field.label), "Changed"]).replace(/","/g, '", "'),
    __expectedCells__: literal(["name: record.name", ...fields.map((field) => `${field.name}: ${expectedCell(field)}`)], ",", 2),
    __sandboxFields__: fields.map((field, i) => `      ${field.name}: ${sandboxValue(field, nths[i]!)},\n`).join(""),
  };
}
