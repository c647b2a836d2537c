// npm run new:resource -- <name> [--field <name>:<type>]... [--singular <name>] [--root <folder>]   (--help: the usage)
//
// Writes a read-only synced resource end to end, from one plural kebab-case name (e.g. `tariffs`)
// and the fields of its records to keep as columns (`--field startsAt:timestamp`; none: the name only):
//   sandbox     sandbox/lists/<name>.ts (the list it serves) + its line in sandbox/lists/index.ts
//   database    a model in prisma/schema.prisma (+ its relation on Install) and a migration
//   sync        lib/sync/<name>.ts + its line in lib/sync/resources.ts (the sync order, retention,
//               freshness, the console and the scope words follow from it)
//   page        lib/dashboard/<name>.ts (the page's read), app/dashboard/<name>/ (a table with a column
//               per field, loading and error states) + its line in app/dashboard/sections.ts
//   tests       tests/sandbox/<name>.test.ts, and the section's own app/dashboard/<name>/_tests/
//               (an integration test and a Playwright test)
//   scope       <name>:read added to the registration the template ships (APP_REQUESTED_SCOPES in
//               scripts/lib/local-env.ts and .env.example)
// then regenerates the Prisma client. Its output passes lint, typecheck and its own tests as written
// (`npm run check:new-resource` proves it on a scratch copy). docs/adding-a-feature.md walks through
// what each file does and what a fork changes in it.
//
// A small script rather than plop or hygen: besides writing files from templates it must insert one
// line into each registry and number a migration after the last one, which those tools would need
// custom actions for anyway, and the template engine would be a dependency every fork carries for
// one command. The templates are in scripts/new-resource/templates/, with __tokens__ for the names
// (scripts/new-resource/names.ts) and for the lines each field adds (scripts/new-resource/fields.ts).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { FieldError, FIELD_TYPES, fieldTokens, parseFields, type Field } from "./new-resource/fields";
import { headlineTokens } from "./new-resource/headline";
import { NameError, resourceNames, type ResourceNames } from "./new-resource/names";

const TEMPLATES = path.join(import.meta.dirname, "new-resource", "templates");

const USAGE = `usage: npm run new:resource -- <name> [--field <name>:<type>]... [--headline] [--singular <name>] [--root <dir>] [--skip-generate]
  name             the resource, plural and kebab-case: the API path (/<name>), the scope (<name>:read),
                   the table (synced_<name>), the page (/dashboard/<name>)
  --field          a field of the record to keep as a column and show on the page, repeatable: its
                   name in camelCase as the API sends it (the column is snake_case) and its type,
                   one of ${FIELD_TYPES.join(", ")} (number = decimal); without any, the name only
  --headline       a figure of the resource among the Overview's headlines: how many records' first
                   timestamp field falls in the Overview's days (without one: how many are in the copy)
  --singular       the model's name in words when dropping an "s" is wrong (e.g. --singular datum)
  --root           the project to write into (default: this one)
  --skip-generate  do not regenerate the Prisma client afterwards
  -h, --help       this text
example:
  npm run new:resource -- reservations --field startsAt:timestamp --field state:text --field kwh:decimal --headline
(docs/adding-a-feature.md walks through what it writes)`;

function usage(message: string): never {
  console.error(`new:resource: ${message}\n${USAGE}`);
  process.exit(2);
}

const { values, positionals } = (() => {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        field: { type: "string", multiple: true },
        headline: { type: "boolean" },
        singular: { type: "string" },
        root: { type: "string" },
        "skip-generate": { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    usage((error as Error).message);
  }
})();
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (positionals.length !== 1) usage("give exactly one name");
let names: ResourceNames;
let fields: Field[];
try {
  names = resourceNames(positionals[0]!, values.singular);
  fields = parseFields(values.field ?? []);
} catch (error) {
  if (error instanceof NameError || error instanceof FieldError) usage(error.message);
  throw error;
}
const root = path.resolve(values.root ?? ".");
const at = (file: string) => path.join(root, file);

/** A template with its tokens replaced: the names', and the fields' (./new-resource/fields.ts). */
function render(template: string): string {
  const tokens: Record<string, string> = {
    ...fieldTokens(fields),
    ...headlineTokens(names, fields, values.headline === true),
    __slug__: names.slug,
    __snake__: names.snake,
    __camel__: names.camel,
    __Singular__: names.singular,
    __Pascal__: names.pascal,
    __words__: names.words,
    __Title__: names.title,
  };
  return readFileSync(path.join(TEMPLATES, template), "utf8").replace(/__[A-Za-z]+__/g, (token) => {
    if (tokens[token] === undefined) throw new Error(`${template}: unknown token ${token}`);
    return tokens[token];
  });
}

// ----- refuse before writing anything -------------------------------------------------------------

const newFiles: [file: string, template: string][] = [
  [`sandbox/lists/${names.slug}.ts`, "sandbox-list.ts.tmpl"],
  [`lib/sync/${names.slug}.ts`, "sync.ts.tmpl"],
  [`lib/dashboard/${names.slug}.ts`, "dashboard.ts.tmpl"],
  [`app/dashboard/${names.slug}/page.tsx`, "page.tsx.tmpl"],
  [`app/dashboard/${names.slug}/loading.tsx`, "loading.tsx.tmpl"],
  [`app/dashboard/${names.slug}/error.tsx`, "error.tsx.tmpl"],
  [`app/dashboard/${names.slug}/_tests/${names.slug}.test.ts`, "integration.test.ts.tmpl"],
  [`app/dashboard/${names.slug}/_tests/${names.slug}.spec.ts`, "e2e.spec.ts.tmpl"],
  [`app/dashboard/${names.slug}/_tests/cells.ts`, "cells.ts.tmpl"],
  [`tests/sandbox/${names.slug}.test.ts`, "sandbox.test.ts.tmpl"],
];
for (const [file] of newFiles) if (existsSync(at(file))) usage(`${file} exists already: is "${names.slug}" a resource of this app?`);
const schemaPath = at("prisma/schema.prisma");
const schema = readFileSync(schemaPath, "utf8");
if (new RegExp(`^model Synced${names.singular} \\{`, "m").test(schema)) usage(`prisma/schema.prisma has a model Synced${names.singular} already`);

// ----- the registries: one line each --------------------------------------------------------------

/**
 * Adds `entry` as the last element of the array literal that follows `marker` (the registry's one
 * list), and `importLine` after the file's last import. The registries are written so that this is a
 * plain edit: one array, closed by `]` on its own line or at the end of a one-line literal. In a
 * multi-line list, `before` names an entry that must stay after the new one (with the comment lines
 * above it); without it, or when no entry matches, the new one is last.
 */
function register(file: string, marker: string, entry: string, importLine: string, before?: RegExp): void {
  const text = readFileSync(at(file), "utf8");
  const start = text.indexOf(marker);
  if (start === -1) throw new Error(`${file}: cannot find \`${marker}\`; add the entry by hand`);
  const open = text.indexOf("[", start + marker.length - 1);
  let depth = 0;
  let close = -1;
  for (let i = open; i < text.length; i += 1) {
    if (text[i] === "[") depth += 1;
    if (text[i] === "]" && --depth === 0) {
      close = i;
      break;
    }
  }
  if (close === -1) throw new Error(`${file}: the list after \`${marker}\` does not close`);
  const inner = text.slice(open + 1, close);
  const multiline = inner.includes("\n");
  const lines = inner.split("\n");
  let slot = before && multiline ? lines.findIndex((line) => before.test(line)) : -1;
  while (slot > 0 && /^\s*\/\//.test(lines[slot - 1]!)) slot -= 1;
  const withEntry =
    slot > 0
      ? [...lines.slice(0, slot), `  ${entry},`, ...lines.slice(slot)].join("\n")
      : multiline
        ? `${inner.replace(/\s*$/, "")}\n  ${entry},\n`
        : inner.trim().length === 0
          ? entry
          : `${inner.trim()}, ${entry}`;
  let next = text.slice(0, open + 1) + withEntry + text.slice(close);
  if (importLine) {
    const last = [...next.matchAll(/^import .*;$/gm)].at(-1);
    const insertAt = last ? last.index! + last[0].length : 0;
    next = `${next.slice(0, insertAt)}\n${importLine}${next.slice(insertAt)}`;
  }
  writeFileSync(at(file), next);
}

// ----- the migration: numbered after the last one --------------------------------------------------

function migrationName(): string {
  const dir = at("prisma/migrations");
  const last = readdirSync(dir).filter((name) => /^\d{14}_/.test(name)).sort().at(-1);
  const stamp = (date: Date) => date.toISOString().replace(/\D/g, "").slice(0, 14);
  let when = new Date();
  // A clock behind the last migration (or two runs in one second) must still sort after it.
  if (last && stamp(when) <= last.slice(0, 14)) {
    const t = last.slice(0, 14);
    when = new Date(Date.UTC(+t.slice(0, 4), +t.slice(4, 6) - 1, +t.slice(6, 8), +t.slice(8, 10), +t.slice(10, 12), +t.slice(12, 14) + 1));
  }
  return `${stamp(when)}_${names.snake}`;
}

// ----- write -------------------------------------------------------------------------------------

const written: string[] = [];
for (const [file, template] of newFiles) {
  mkdirSync(path.dirname(at(file)), { recursive: true });
  writeFileSync(at(file), render(template));
  written.push(file);
}

// The model, and its relation on Install (Prisma needs both sides): after the last synced relation.
const relation = `  synced${names.pascal} Synced${names.singular}[]`;
const installModel = /^model Install \{[\s\S]*?^\}/m.exec(schema);
if (!installModel) throw new Error("prisma/schema.prisma: no model Install");
const lastSynced = [...installModel[0].matchAll(/^ {2}synced\w+ +Synced\w+\[\]$/gm)].at(-1);
const relationAt = installModel.index + (lastSynced ? lastSynced.index! + lastSynced[0].length : installModel[0].lastIndexOf("\n"));
writeFileSync(schemaPath, `${schema.slice(0, relationAt)}\n${relation}${schema.slice(relationAt)}`.replace(/\n*$/, "\n") + render("model.prisma.tmpl"));
written.push("prisma/schema.prisma (model Synced" + names.singular + ", and its relation on Install)");

const migration = `prisma/migrations/${migrationName()}/migration.sql`;
mkdirSync(path.dirname(at(migration)), { recursive: true });
writeFileSync(at(migration), render("migration.sql.tmpl"));
written.push(migration);

// The scope in the registration the template ships (npm run dev's, and .env.example's for a
// deployment), so that the new list is requested, granted and synced. The tests pin their own
// registration (scripts/test.ts) and register the scope themselves.
for (const [file, pattern] of [
  ["scripts/lib/local-env.ts", /(APP_REQUESTED_SCOPES: ")([^"]*)(")/],
  [".env.example", /^(APP_REQUESTED_SCOPES=)(.*)()$/m],
] as const) {
  const text = readFileSync(at(file), "utf8");
  const match = pattern.exec(text);
  if (!match) {
    console.warn(`new:resource: no APP_REQUESTED_SCOPES in ${file}; add ${names.slug}:read there by hand`);
    continue;
  }
  const scopes = match[2]!.split(" ").filter(Boolean);
  if (scopes.includes(`${names.slug}:read`)) continue;
  writeFileSync(at(file), text.replace(pattern, (_, before: string, list: string, after: string) => `${before}${[list, `${names.slug}:read`].filter(Boolean).join(" ")}${after}`));
  written.push(`${file} (${names.slug}:read in APP_REQUESTED_SCOPES)`);
}

register("lib/sync/resources.ts", "const REGISTERED = [", names.camel, `import { ${names.camel} } from "./${names.slug}";`);
// Before "Settings and access", which stays last (its comment in sections.ts says why).
register("app/dashboard/sections.ts", "export const DASHBOARD_SECTIONS = [", `{ href: "/dashboard/${names.slug}", label: "${names.title}" }`, "", /href: "\/dashboard\/settings"/);
register("sandbox/lists/index.ts", "export const EXTRA_LISTS: readonly ExtraList[] = [", names.camel, `import { ${names.camel} } from "./${names.slug}.js";`);
written.push("lib/sync/resources.ts (one line)", "app/dashboard/sections.ts (one line)", "sandbox/lists/index.ts (one line)");

console.log(`new:resource: ${names.slug} (table synced_${names.snake}, scope ${names.slug}:read${fields.length ? `, fields ${fields.map((f) => `${f.name}:${f.type}`).join(" ")}` : ""})`);
for (const file of written) console.log(`  ${file}`);

if (!values["skip-generate"]) {
  // The Prisma client must know the new model before anything compiles against it.
  const generate = spawnSync(process.execPath, [path.join(root, "scripts/prisma-generate.mjs")], { cwd: root, encoding: "utf8" });
  if (generate.status !== 0) {
    console.error(generate.stdout, generate.stderr);
    process.exit(1);
  }
  console.log("  lib/db/generated (the Prisma client, regenerated)");
}

console.log(`
Next:
  - the app now requests ${names.slug}:read (npm run dev's registration and .env.example); add it to
    your registration at the service too, which asks every operator to approve again (contract §3);
  - replace the sandbox's guessed records (sandbox/lists/${names.slug}.ts) and the columns the app keeps
    (lib/sync/${names.slug}.ts, the model and migration) with the operation's real shape, and record each
    guess in your own section of docs/spec-gaps.md (docs/updating.md, "The spec-gap register");
  - run: npm run db:migrate, then npm test -- files tests/sandbox/${names.slug}.test.ts app/dashboard/${names.slug}/_tests/${names.slug}.test.ts app/dashboard/${names.slug}/_tests/${names.slug}.spec.ts
  (docs/adding-a-feature.md walks through each file)`);
