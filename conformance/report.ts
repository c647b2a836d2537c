// The run's report, three ways: a table for people, JSON for tools, JUnit XML for CI (one testcase per check: a FAIL
// is a <failure>, a NOT RUN a <skipped>, each with its evidence).
import type { RunReport } from "./run";

export function table(report: RunReport): string {
  const rows = report.results.map((r) => [r.verdict, r.id, r.section, r.obligation, r.evidence.join(" · ")]);
  const head = ["Result", "Check", "Contract", "Obligation", "Evidence"];
  const widths = head.slice(0, 3).map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i < 3 ? cell.padEnd(widths[i]!) : cell)).join("  ");
  const counts = (v: string) => report.results.filter((r) => r.verdict === v).length;
  return [
    line(head),
    ...rows.flatMap((row) => [line([row[0]!, row[1]!, row[2]!, row[3]!]), `${" ".repeat(widths[0]! + widths[1]! + widths[2]! + 6)}↳ ${row[4]}`]),
    "",
    `${counts("PASS")} passed, ${counts("FAIL")} failed, ${counts("NOT RUN")} not run, in ${report.seconds} s: ${report.passed ? "CONFORMS" : "DOES NOT CONFORM"}`,
  ].join("\n");
}

export function json(report: RunReport): string {
  return JSON.stringify(report, null, 2);
}

const escapeXml = (text: string) => text.replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c]!);

export function junit(report: RunReport): string {
  const count = (v: string) => report.results.filter((r) => r.verdict === v).length;
  const cases = report.results.map((r) => {
    const name = escapeXml(`${r.id}: ${r.obligation} (contract ${r.section})`);
    const evidence = escapeXml(r.evidence.join("\n"));
    const body =
      r.verdict === "FAIL"
        ? `\n      <failure message="${escapeXml(r.evidence[0] ?? "failed")}">${evidence}</failure>\n    `
        : r.verdict === "NOT RUN"
          ? `\n      <skipped message="${escapeXml(r.evidence[0] ?? "not run")}"/>\n    `
          : `\n      <system-out>${evidence}</system-out>\n    `;
    return `    <testcase classname="conformance.${escapeXml(r.group)}" name="${name}" time="${r.seconds}">${body}</testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="conformance" tests="${report.results.length}" failures="${count("FAIL")}" skipped="${count("NOT RUN")}" time="${report.seconds}">`,
    `  <testsuite name="contract obligations" tests="${report.results.length}" failures="${count("FAIL")}" skipped="${count("NOT RUN")}" time="${report.seconds}" timestamp="${report.startedAt}">`,
    ...cases,
    "  </testsuite>",
    "</testsuites>",
    "",
  ].join("\n");
}
