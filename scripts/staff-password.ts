// npm run staff:password -- <email> [--role viewer|operator]
//
// Prints one STAFF_USERS entry, `<email>=<scrypt hash>` (a console operator, who may act on installs)
// or `<email>=<scrypt hash>=viewer` (sees everything, changes nothing), for a staff member of the
// console (/admin). The password is read from standard input: typed at a prompt (not echoed, asked
// twice), or piped:
//
//   npm run staff:password -- ops@partner.example
//   npm run staff:password -- support@partner.example --role viewer
//   printf '%s' "$PASSWORD" | npm run staff:password -- ops@partner.example
//
// Join several entries with commas. Only the hash is stored; nothing can turn it back into the password.
import { z } from "zod";
import { parseArgs } from "node:util";
import { hashPassword } from "../lib/auth/password";
// The STAFF_USERS format itself (not lib/auth/staff-accounts.ts, which is server-only).
import { DEFAULT_STAFF_ROLE, STAFF_ROLES } from "../lib/config/staff-users";

const MIN_LENGTH = 12;

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

/** Reads one line from the terminal without echoing it. */
function promptHidden(question: string): Promise<string> {
  return new Promise((resolve) => {
    const stdin = process.stdin;
    process.stderr.write(question);
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding("utf8");
    let value = "";
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === "\r" || char === "\n") {
          stdin.setRawMode(false);
          stdin.pause();
          stdin.off("data", onData);
          process.stderr.write("\n");
          resolve(value);
          return;
        }
        if (char === "\u0003") {
          stdin.setRawMode(false);
          process.stderr.write("\n");
          process.exit(130); // Ctrl+C
        }
        if (char === "\u007f" || char === "\b") value = value.slice(0, -1);
        else value += char;
      }
    };
    stdin.on("data", onData);
  });
}

async function readPiped(): Promise<string> {
  let text = "";
  for await (const chunk of process.stdin) text += chunk;
  return text.replace(/\r?\n$/, ""); // one trailing newline, as `echo` adds
}

const USAGE = "Usage: npm run staff:password -- <email> [--role viewer|operator]   (the password is read from standard input)";
let args: ReturnType<typeof parseArgs<{ options: { role: { type: "string" } }; allowPositionals: true }>>;
try {
  args = parseArgs({ options: { role: { type: "string" } }, allowPositionals: true });
} catch {
  fail(USAGE);
}
const email = z.string().trim().toLowerCase().pipe(z.email()).safeParse(args.positionals[0] ?? "");
const role = z.enum(STAFF_ROLES).default(DEFAULT_STAFF_ROLE).safeParse(args.values.role);
if (!email.success || !role.success || args.positionals.length > 1) fail(USAGE);

let password: string;
if (process.stdin.isTTY) {
  password = await promptHidden(`Password for ${email.data}: `);
  if ((await promptHidden("Again: ")) !== password) fail("The two passwords differ.");
} else {
  password = await readPiped();
}
if (password.length < MIN_LENGTH) fail(`Use at least ${MIN_LENGTH} characters.`);

// No role written for an operator: the entry then reads as entries always have (the default role).
console.log(`${email.data}=${hashPassword(password)}${role.data === "operator" ? "" : `=${role.data}`}`);
