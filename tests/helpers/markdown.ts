// The project's Markdown files, for the docs tests (tests/unit/docs-links.test.ts, tests/e2e/docs-mermaid.spec.ts).
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("../..", import.meta.url));
/** Folders that hold no docs of the project (dependencies, build output, local state, test output). */
const SKIPPED = new Set(["node_modules", ".git", ".data", "test-results", "playwright-report", "coverage"]);

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory()) return SKIPPED.has(entry.name) || entry.name.startsWith(".next") ? [] : markdownFiles(join(dir, entry.name));
    return entry.name.endsWith(".md") ? [join(dir, entry.name)] : [];
  });
}

/** Every Markdown file of the project: its path, its name from the root, its text. */
export function projectDocs(): { file: string; name: string; text: string }[] {
  return markdownFiles(root).map((file) => ({ file, name: relative(root, file), text: readFileSync(file, "utf8") }));
}

/** Every ```mermaid block of a Markdown text, with the line its source starts on. */
export function mermaidBlocks(text: string): { line: number; source: string }[] {
  return [...text.matchAll(/^```mermaid[ \t]*\r?\n([\s\S]*?)^```/gm)].map((match) => ({
    line: text.slice(0, match.index).split("\n").length + 1,
    source: match[1]!,
  }));
}
