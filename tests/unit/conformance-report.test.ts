// The conformance run's report writers (conformance/report.ts): the table people read, the JSON tools read, and the
// JUnit XML a CI shows, with a FAIL as a failure and a NOT RUN as a skipped case, evidence escaped.
import { describe, expect, it } from "vitest";
import { json, junit, table } from "../../conformance/report";
import type { RunReport } from "../../conformance/run";

const report: RunReport = {
  startedAt: "2026-11-27T00:00:00.000Z",
  seconds: 42.5,
  passed: false,
  results: [
    { id: "install.redeem", group: "install", obligation: "The code is redeemed at once", section: "§2", verdict: "PASS", evidence: ["1 redemption"], seconds: 1.2 },
    { id: "webhooks.forged", group: "webhooks", obligation: "A forged delivery is refused", section: "§6.3", verdict: "FAIL", evidence: ['the app answered 200 (401 expected) <"&>'], seconds: 0.5 },
    { id: "tokens.keep-alive", group: "tokens", obligation: "Idle installs are kept alive", section: "§2, §8", verdict: "NOT RUN", evidence: ["no keep-alive trigger was given"], seconds: 0 },
  ],
};

describe("the conformance report", () => {
  it("the table has one row per check with its evidence, and the verdict of the run", () => {
    const text = table(report);
    expect(text).toMatch(/^PASS +install\.redeem +§2 +The code is redeemed at once$/m);
    expect(text).toMatch(/^FAIL +webhooks\.forged +§6\.3 +A forged delivery is refused$/m);
    expect(text).toContain("↳ no keep-alive trigger was given");
    expect(text).toContain("1 passed, 1 failed, 1 not run, in 42.5 s: DOES NOT CONFORM");
  });

  it("JUnit XML: a FAIL is a failure, a NOT RUN a skipped case, text escaped", () => {
    const xml = junit(report);
    expect(xml).toContain('<testsuites name="conformance" tests="3" failures="1" skipped="1" time="42.5">');
    expect(xml).toContain('<testcase classname="conformance.webhooks" name="webhooks.forged: A forged delivery is refused (contract §6.3)" time="0.5">');
    expect(xml).toContain('<failure message="the app answered 200 (401 expected) &lt;&quot;&amp;&gt;">');
    expect(xml).toContain('<skipped message="no keep-alive trigger was given"/>');
    expect(xml).not.toMatch(/<"&>/);
  });

  it("JSON holds the whole report", () => {
    expect(JSON.parse(json(report))).toEqual(report);
  });
});
