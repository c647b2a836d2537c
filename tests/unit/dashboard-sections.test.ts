// The dashboard's sections registry (app/dashboard/sections.ts): every entry is a folder with a page,
// every page folder is an entry, and an optional section is self-contained: no file outside its
// folder names its route or imports from it, so deleting the folder and its entry removes it with
// nothing left pointing at it (and no test left to fail).
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DASHBOARD_SECTIONS } from "@/app/dashboard/sections";

const ROOT = path.resolve(import.meta.dirname, "../..");
const SOURCE_DIRS = ["app", "lib", "tests", "scripts", "proxy.ts", "instrumentation.ts"];
const SKIP = new Set(["node_modules", ".next", ".data", "generated"]);

function sourceFiles(entry: string): string[] {
  const full = path.join(ROOT, entry);
  if (statSync(full).isFile()) return /\.(ts|tsx|mjs)$/.test(entry) ? [entry] : [];
  return readdirSync(full).flatMap((name) => (SKIP.has(name) ? [] : sourceFiles(path.join(entry, name))));
}

const folderOf = (href: string) => path.join("app", ...href.split("/").filter(Boolean));

describe("the dashboard's sections", () => {
  it("are each a folder with a page, and every page folder under app/dashboard is a section", () => {
    // A section's page may sit in a route group, e.g. charge-points/(list)/page.tsx.
    const hasPage = (folder: string) => readdirSync(path.join(ROOT, folder), { recursive: true, encoding: "utf8" }).some((file) => path.basename(file) === "page.tsx");
    for (const { href } of DASHBOARD_SECTIONS) expect(hasPage(folderOf(href)), href).toBe(true);
    const withPages = readdirSync(path.join(ROOT, "app/dashboard"), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && !entry.name.startsWith("_") && !entry.name.startsWith("("))
      .filter((entry) => hasPage(path.join("app/dashboard", entry.name)))
      .map((entry) => `/dashboard/${entry.name}`);
    expect(withPages.sort()).toEqual(DASHBOARD_SECTIONS.map((s) => s.href as string).sort());
  });

  it("an optional section is named by nothing outside its folder and the registry", () => {
    const files = SOURCE_DIRS.flatMap(sourceFiles);
    const optional = DASHBOARD_SECTIONS.filter((section) => "optional" in section && section.optional);
    expect(optional.length).toBeGreaterThan(0);
    for (const { href } of optional) {
      const folder = folderOf(href);
      const outside = files.filter((file) => !file.startsWith(`${folder}${path.sep}`) && file !== path.join("app", "dashboard", "sections.ts"));
      const referring = outside.filter((file) => {
        const text = readFileSync(path.join(ROOT, file), "utf8");
        return text.includes(`"${href}`) || text.includes(`\`${href}`) || text.includes(`${folder.split(path.sep).join("/")}/`) || text.includes(`dashboard/${path.basename(folder)}/`);
      });
      expect(referring, `${href} is named outside ${folder}`).toEqual([]);
      // The docs may describe a section, but a path into its folder in backticks would be a link the
      // docs test (tests/unit/docs-links.test.ts) fails on once the folder is gone.
      const docs = ["README.md", ...readdirSync(path.join(ROOT, "docs")).filter((name) => name.endsWith(".md")).map((name) => path.join("docs", name))];
      const linking = docs.filter((file) => readFileSync(path.join(ROOT, file), "utf8").includes(`\`${folder.split(path.sep).join("/")}/`));
      expect(linking, `${href}'s folder is named in the docs`).toEqual([]);
    }
  });
});
