// npm run rename -- "<Display name>" <slug> [--mark <mark>] [--root <dir>]   (--help: the usage)
//
// Makes the template yours: sets the product's names in lib/config/product.ts (the one place the
// code reads them from) and in the files that cannot import it (package.json, package-lock.json,
// compose.yaml, .env.example, prisma.config.ts), and prints each file it changed. Every operational
// name (log `service`, OpenTelemetry service names, metric prefix, cookie names, database name) is
// derived from the slug, as lib/config/product.ts describes. Running it again with the same names
// changes nothing. What changing them does to dashboards, sessions and a local database, and what
// the command does not decide for you: README.md, "Make it yours".
//
//   npm run rename -- "Volt Fleet" volt-fleet
//   npm run rename -- "Volt Fleet" volt-fleet --mark VF
//
// Exit codes: 0 done (or nothing to change), 2 the arguments are wrong, 1 a file had an unexpected
// shape (nothing was written).
import { parseArgs } from "node:util";
import path from "node:path";
import { RENAMED_FILES, RenameTargetError, RenameUsageError, parseIdentity, renameProduct } from "./lib/rename";

const USAGE = `usage: npm run rename -- "<Display name>" <slug> [--mark <mark>] [--root <dir>]
  display name  what people read (title, header, the service's consent screen): letters, digits,
                spaces and . , ' & ( ) + : ! ? / -, at most 60 characters
  slug          every operational name is derived from it: lower-case letters, digits and single
                hyphens, starting with a letter, at most 40 characters (e.g. volt-fleet)
  --mark        the header's mark before the name (an emoji or initials); unchanged when left out
  --root        the project to rename (default: this one)
  -h, --help    this text
example:
  npm run rename -- "Volt Fleet" volt-fleet --mark VF
(README.md, "Make it yours", says what changing the names does)`;

function usageError(message: string): never {
  console.error(`rename: ${message}\n${USAGE}`);
  process.exit(2);
}

function parse() {
  return parseArgs({ allowPositionals: true, options: { mark: { type: "string" }, root: { type: "string" }, help: { type: "boolean", short: "h" } } });
}
let args: ReturnType<typeof parse>;
try {
  args = parse();
} catch (error) {
  usageError(error instanceof Error ? error.message : String(error));
}
if (args.values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (args.positionals.length > 2) usageError(`too many arguments (quote a display name with spaces): ${args.positionals.join(" ")}`);

const root = path.resolve(args.values.root ?? path.join(import.meta.dirname, ".."));
try {
  const identity = parseIdentity(args.positionals[0], args.positionals[1], args.values.mark);
  const changed = renameProduct(root, identity);
  if (changed.length === 0) {
    console.log(`rename: nothing to change; the product is already "${identity.displayName}" (${identity.slug}).`);
  } else {
    for (const file of changed) console.log(`changed ${file}`);
    console.log(`rename: now "${identity.displayName}" (${identity.slug}). Next: README.md, "Make it yours".`);
  }
} catch (error) {
  if (error instanceof RenameUsageError) usageError(error.message);
  if (error instanceof RenameTargetError) {
    console.error(`rename: ${error.message}\nNothing was written. The files it rewrites: ${RENAMED_FILES.join(", ")}.`);
    process.exit(1);
  }
  throw error;
}
