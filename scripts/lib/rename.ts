// What `npm run rename` does (scripts/rename.ts), apart from the command line, so that a test can run
// it on a scratch copy: checks the new names, rewrites the names module (lib/config/product.ts) and
// the files that cannot import it, and says which files changed.
//
// Every rewrite finds its place by the shape around the name, never by the old name, so it works on
// a fork whose files were renamed once already, and running it twice changes nothing the second time.
// A place it cannot find (a file edited by hand) stops the run before anything is written.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { PRODUCT_IDENTITY, ProductIdentitySchema, productNames, type ProductIdentity, type ProductNames } from "../../lib/config/product";

/** A file whose names `npm run rename` rewrites, and how. */
type Rewrite = { file: string; apply: (text: string, names: ProductNames) => string };

/** The arguments were wrong: scripts/rename.ts prints the message and exits with 2. */
export class RenameUsageError extends Error {}

/** A file did not have the shape the rewrite expects (edited by hand): nothing was written. */
export class RenameTargetError extends Error {}

/**
 * The new identity from `"<Display name>" <slug>` and an optional mark (the current one otherwise),
 * checked by the same schemas the names module declares.
 */
export function parseIdentity(displayName: string | undefined, slug: string | undefined, mark: string = PRODUCT_IDENTITY.mark): ProductIdentity {
  if (displayName === undefined || slug === undefined) throw new RenameUsageError("give a display name and a slug");
  const parsed = ProductIdentitySchema.safeParse({ displayName, slug, mark });
  if (!parsed.success) throw new RenameUsageError(parsed.error.issues.map((issue) => issue.message).join("; "));
  return parsed.data;
}

/** Replaces every match of `pattern` (which must match at least once) with `replacement`. */
function replaceIn(file: string, text: string, pattern: RegExp, replacement: (...groups: string[]) => string): string {
  const global = new RegExp(pattern.source, pattern.flags.includes("g") ? pattern.flags : `${pattern.flags}g`);
  if (!global.test(text)) throw new RenameTargetError(`${file}: no match for ${pattern}; was it edited by hand? Change it yourself, then run the rename again.`);
  global.lastIndex = 0;
  const groupCount = new RegExp(`${pattern.source}|`).exec("")!.length - 1;
  return text.replace(global, (_match, ...rest: unknown[]) => replacement(...(rest.slice(0, groupCount) as string[])));
}

/** A JSON file the way npm writes it (two spaces, a final newline): package.json and package-lock.json keep their bytes. */
function rewriteJson(text: string, change: (json: Record<string, unknown>) => void): string {
  const json = JSON.parse(text) as Record<string, unknown>;
  change(json);
  return `${JSON.stringify(json, null, 2)}\n`;
}

/** The files, in the order they are written. The names module goes last: a failed run leaves it as it was. */
export const REWRITES: readonly Rewrite[] = [
  {
    file: "package.json",
    apply: (text, names) => rewriteJson(text, (json) => void (json.name = names.packageName)),
  },
  {
    // Its two copies of the name (the top, and the root package's entry); npm would rewrite them at
    // the next install, and `npm ci` refuses a lock file that disagrees with package.json.
    file: "package-lock.json",
    apply: (text, names) =>
      rewriteJson(text, (json) => {
        json.name = names.packageName;
        const root = (json.packages as Record<string, Record<string, unknown>> | undefined)?.[""];
        if (!root) throw new RenameTargetError('package-lock.json: no packages[""] entry');
        root.name = names.packageName;
      }),
  },
  {
    file: "compose.yaml",
    apply: (text, { databaseName: db }) => {
      let out = replaceIn("compose.yaml", text, /(POSTGRES_(?:DB|USER): )[a-z0-9_]+/, (key) => `${key}${db}`);
      out = replaceIn("compose.yaml", out, /(pg_isready -U )[a-z0-9_]+( -d )[a-z0-9_]+/, (a, b) => `${a}${db}${b}${db}`);
      return replaceIn("compose.yaml", out, /(postgresql:\/\/)[a-z0-9_]+(:\$\{POSTGRES_PASSWORD\}@db:5432\/)[a-z0-9_]+/, (a, b) => `${a}${db}${b}${db}`);
    },
  },
  {
    file: ".env.example",
    apply: (text, names) => {
      let out = replaceIn(".env.example", text, /^(DATABASE_URL=postgresql:\/\/user:password@db\.example\.com:5432\/)[a-z0-9_]+$/m, (a) => `${a}${names.databaseName}`);
      out = replaceIn(".env.example", out, /^(# ALERT_WEBHOOK_URL=https:\/\/alerts\.example\.com\/hooks\/)[a-z0-9-]+$/m, (a) => `${a}${names.slug}`);
      return replaceIn(".env.example", out, /^(APP_NAME=).*$/m, (a) => `${a}${names.displayName}`);
    },
  },
  {
    file: "prisma.config.ts",
    apply: (text, names) => replaceIn("prisma.config.ts", text, /("postgresql:\/\/localhost:5432\/)[a-z0-9_]+(")/, (a, b) => `${a}${names.databaseName}${b}`),
  },
  {
    file: "lib/config/product.ts",
    apply: (text, { displayName, mark, slug }) =>
      replaceIn(
        "lib/config/product.ts",
        text,
        /(export const PRODUCT_IDENTITY = \{\n)  displayName: .*,\n  mark: .*,\n  slug: .*,\n(\} as const)/,
        (open, close) => `${open}  displayName: ${JSON.stringify(displayName)},\n  mark: ${JSON.stringify(mark)},\n  slug: ${JSON.stringify(slug)},\n${close}`,
      ),
  },
];

/** The files `npm run rename` may change, relative to the project's root. */
export const RENAMED_FILES = REWRITES.map((rewrite) => rewrite.file);

/**
 * Renames the project under `root` to `identity`: every rewrite is computed first, then only the
 * files whose text changed are written. Returns those files, relative to `root`.
 */
export function renameProduct(root: string, identity: ProductIdentity): string[] {
  const names = productNames(ProductIdentitySchema.parse(identity));
  const changes = REWRITES.map(({ file, apply }) => {
    const before = readFileSync(path.join(root, file), "utf8");
    return { file, before, after: apply(before, names) };
  }).filter(({ before, after }) => before !== after);
  for (const { file, after } of changes) writeFileSync(path.join(root, file), after);
  return changes.map(({ file }) => file);
}
