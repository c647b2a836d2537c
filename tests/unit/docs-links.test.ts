// The docs are part of the template: a fork learns the flow from them, so a link to a file that was
// moved, a path in backticks that no longer exists, or an `npm run` script that was renamed is a
// bug. This reads every Markdown file in the repository (README.md, docs/, sandbox/README.md, ...)
// and checks:
// - every relative Markdown link resolves to a file or folder, and a `#fragment` into a Markdown file
//   names one of its headings (GitHub's anchor rule);
// - every path in backticks under a top-level folder of the project (`lib/oauth/refresh.ts`) exists,
//   and a function named beside it (`lib/oauth/refresh.ts` (`refreshInstallTokens`), the register's
//   "one place to change") is still in that file;
// - every `npm run <script>` names a script in package.json, and `npm test -- <part>` a part
//   scripts/test.ts knows.
// That every Mermaid diagram parses is checked in a browser: tests/e2e/docs-mermaid.spec.ts.
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { projectDocs, root } from "../helpers/markdown";

const PROJECT_FOLDERS = ["app", "lib", "sandbox", "scripts", "conformance", "tests", "prisma", "docs", "public", ".ci", ".github"];

/** GitHub's heading anchors: lower case, punctuation dropped (but `-` and `_`), spaces to `-`. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of markdown.replace(/```[\s\S]*?```/g, "").matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = heading!
      .replace(/`/g, "")
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

const docs = projectDocs();
const scripts = Object.keys((JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts);

describe("the docs", () => {
  it("are found: the README, docs/ and the sandbox's README at least", () => {
    const names = docs.map((d) => d.name);
    expect(names).toEqual(expect.arrayContaining(["README.md", "sandbox/README.md", "docs/spec-gaps.md", "docs/security.md"]));
  });

  it("link only to files that exist, and to headings that exist", () => {
    const broken: string[] = [];
    for (const { file, name, text } of docs) {
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue; // https:, mailto:: not a file
        const [path, fragment] = target!.split("#", 2) as [string, string | undefined];
        const resolved = path === "" ? file : resolve(dirname(file), decodeURI(path));
        if (!existsSync(resolved)) {
          broken.push(`${name}: ${target} (no such file)`);
          continue;
        }
        if (fragment && resolved.endsWith(".md") && statSync(resolved).isFile() && !anchorsOf(readFileSync(resolved, "utf8")).has(fragment)) {
          broken.push(`${name}: ${target} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("name only project paths that exist", () => {
    const missing: string[] = [];
    const pathPattern = new RegExp(`\`((?:${PROJECT_FOLDERS.map((f) => f.replace(".", "\\.")).join("|")})/[^\`\\s]*)\``, "g");
    for (const { name, text } of docs) {
      for (const [, quoted] of text.matchAll(pathPattern)) {
        // `lib/x.ts:42` or `lib/x.ts#fn` point into a file; a glob or a placeholder is not a path.
        const path = quoted!.replace(/[:#].*$/, "").replace(/\/$/, "");
        if (/[*<>{}…]/.test(path)) continue;
        if (!existsSync(join(root, path))) missing.push(`${name}: ${quoted}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("name functions where they are: `file` (`name`) means the name is in that file", () => {
    const moved: string[] = [];
    for (const { name, text } of docs) {
      for (const [, path, inside] of text.matchAll(/`((?:app|lib|sandbox|scripts|tests|prisma)\/[^`\s]+\.(?:ts|tsx|mjs))` \(([^)]*)\)/g)) {
        if (!existsSync(join(root, path!))) continue; // reported by the test above
        const source = readFileSync(join(root, path!), "utf8");
        // Up to the first ";": what follows may name things in other files ("… kept by `x` in `other.ts`").
        for (const [, identifier] of inside!.split(";")[0]!.matchAll(/`([A-Za-z_$][\w$]*)(?:\(\))?`/g)) {
          if (!new RegExp(`\\b${identifier!.replace(/\$/g, "\\$")}\\b`).test(source)) moved.push(`${name}: ${path} (${identifier})`);
        }
      }
    }
    expect(moved).toEqual([]);
  });

  it("run only npm scripts that exist", () => {
    const unknown: string[] = [];
    for (const { name, text } of docs) {
      for (const [, script] of text.matchAll(/npm run ([a-z][a-z0-9:-]*)/g)) {
        if (!scripts.includes(script!)) unknown.push(`${name}: npm run ${script}`);
      }
      for (const [, part] of text.matchAll(/npm test -- ([a-z][a-z0-9-]*)/g)) {
        if (!["vitest", "e2e", "files"].includes(part!)) unknown.push(`${name}: npm test -- ${part}`);
      }
    }
    expect(unknown).toEqual([]);
  });
});
