// Every Mermaid diagram in the docs parses (docs/flow.md draws the install flow, the refresh, the
// webhooks… as sequence diagrams). GitHub shows a diagram that does not parse as an error box, and a
// fork reads the flow from those pictures: one `;` in a message was enough to break one.
//
// Mermaid's parser needs a DOM for most diagram types (it sanitizes labels with DOMPurify), so it runs
// here, in Chromium: mermaid's own browser bundle from node_modules, loaded into a blank page, and
// `mermaid.parse` on each ```mermaid block of every Markdown file. No stack is needed.
import { createRequire } from "node:module";
import { expect, test, type Page } from "@playwright/test";
import { mermaidBlocks, projectDocs } from "../helpers/markdown";

const MERMAID_BUNDLE = createRequire(import.meta.url).resolve("mermaid/dist/mermaid.min.js");

/** What mermaid.parse says of each source: "ok", or its error message. */
async function parseAll(page: Page, sources: string[]): Promise<string[]> {
  await page.setContent("<!doctype html><title>mermaid</title>");
  await page.addScriptTag({ path: MERMAID_BUNDLE });
  return page.evaluate(async (texts) => {
    const mermaid = (globalThis as unknown as { mermaid: { initialize: (c: object) => void; parse: (t: string) => Promise<unknown> } }).mermaid;
    mermaid.initialize({ startOnLoad: false });
    const results: string[] = [];
    for (const text of texts) {
      try {
        await mermaid.parse(text);
        results.push("ok");
      } catch (error) {
        results.push(error instanceof Error ? error.message : String(error));
      }
    }
    return results;
  }, sources);
}

test("every ```mermaid block in the docs parses", async ({ page }) => {
  const blocks = projectDocs().flatMap(({ name, text }) => mermaidBlocks(text).map((block) => ({ ...block, name })));
  // docs/flow.md alone has ten: finding none would be a broken extractor, not clean docs.
  expect(blocks.filter((block) => block.name === "docs/flow.md").length).toBeGreaterThanOrEqual(10);
  const results = await parseAll(page, blocks.map((block) => block.source));
  const broken = blocks.flatMap((block, i) => (results[i] === "ok" ? [] : [`${block.name}:${block.line}: ${results[i]}`]));
  expect(broken).toEqual([]);
});

test("the check can fail: a `;` in a sequence message is rejected, while `#59;` and the other diagram types parse", async ({ page }) => {
  const [semicolon, escaped, flowchart, state] = await parseAll(page, [
    "sequenceDiagram\n  App->>Service: POST /oauth2/token; grant_type=refresh_token\n",
    "sequenceDiagram\n  App->>Service: POST /oauth2/token#59; grant_type=refresh_token\n",
    "flowchart LR\n  A[Start] -->|code| B{valid?}\n  B --> C[Tokens]\n",
    "stateDiagram-v2\n  [*] --> ACTIVE\n  ACTIVE --> REVOKED: install.revoked\n",
  ]);
  expect(semicolon).toContain("Parse error");
  expect([escaped, flowchart, state]).toEqual(["ok", "ok", "ok"]);
});
