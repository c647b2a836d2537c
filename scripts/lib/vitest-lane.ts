// One lane of `npm test` (scripts/test.ts): a Vitest instance, started once, that runs the test
// files its parent sends it one batch at a time, against the stack whose addresses are in its
// environment.
//
// Why not one `vitest run` per lane with a fixed list of files: the files' durations differ by two
// orders of magnitude (40 ms to 70 s) and nothing in a clean clone knows them in advance, so a
// fixed split leaves one lane idle while the other runs. Two lanes taking the next file from one
// queue stay balanced by themselves. Why not a `vitest run` per file: each start costs 2-3 s of
// configuration and transforms; this instance pays that once.
//
// Messages (Node's IPC channel):  parent → { type: "run", files } | { type: "close" }
//                                 lane   → { type: "ready" } | { type: "result", ...LaneResult }
import { createVitest } from "vitest/node";

export type LaneResult = { passed: number; failed: number; skipped: number };
export type LaneRequest = { type: "run"; files: string[] } | { type: "close" };
export type LaneMessage = { type: "ready" } | ({ type: "result" } & LaneResult);

const send = (message: LaneMessage) => process.send?.(message);

// `watch: false` makes it a run, not a watcher; the default reporter prints each file and its failures.
const vitest = await createVitest("test", { watch: false, reporters: ["default"] });
// Starts the reporters (and would the coverage provider) without running anything yet.
await vitest.standalone();

process.on("message", (request: LaneRequest) => {
  if (request.type === "close") {
    void vitest.close().then(() => process.exit(0));
    return;
  }
  void (async () => {
    const totals: LaneResult = { passed: 0, failed: 0, skipped: 0 };
    try {
      const { testModules, unhandledErrors } = await vitest.runTestFiles(request.files);
      const wanted = new Set(request.files.map((file) => file.replace(/^\.\//, "")));
      for (const testModule of testModules) {
        if (![...wanted].some((file) => testModule.moduleId.endsWith(file))) continue;
        for (const test of testModule.children.allTests()) {
          const state = test.result().state;
          if (state === "passed") totals.passed += 1;
          else if (state === "failed") totals.failed += 1;
          else totals.skipped += 1;
        }
        // A file that failed outside its tests (a beforeAll, an import) has no failed test to count.
        if (testModule.state() === "failed" && ![...testModule.children.allTests()].some((t) => t.result().state === "failed")) totals.failed += 1;
      }
      totals.failed += unhandledErrors.length;
    } catch (error) {
      console.error(error);
      totals.failed += 1;
    }
    send({ type: "result", ...totals });
  })();
});

send({ type: "ready" });
