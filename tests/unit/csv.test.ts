// The dashboard's CSV cells (lib/dashboard/csv.ts): RFC 4180 quoting, and no cell a spreadsheet
// could run as a formula (OWASP "CSV injection"), however it is disguised.
import { describe, expect, it } from "vitest";
import { csvCell, csvRecord } from "@/lib/dashboard/csv";

describe("csvCell", () => {
  it("writes plain text and numbers as they are, and quotes per RFC 4180", () => {
    expect(csvCell("Northwind CP-01")).toBe("Northwind CP-01");
    expect(csvCell(12.5)).toBe("12.5");
    expect(csvCell(null)).toBe("");
    expect(csvCell(undefined)).toBe("");
    expect(csvCell("a,b")).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell("two\r\nlines")).toBe('"two\r\nlines"');
  });

  it.each([
    ["=", '=HYPERLINK("http://evil.example","x")'],
    ["+", "+1+cmd|' /C calc'!A0"],
    ["-", "-2+3"],
    ["@", "@SUM(A1:A2)"],
    ["a tab", "\t=1+1"],
    ["a carriage return", "\r=1+1"],
    ["a line feed", "\n=1+1"],
    ["a space", " =1+1"],
    ["a no-break space (U+00A0)", "\u00a0=1+1"],
    ["an em space (U+2003)", "\u2003=1+1"],
    ["an ideographic space (U+3000)", "\u3000=1+1"],
    ["a line separator (U+2028)", "\u2028=1+1"],
    ["a zero-width space (U+200B)", "\u200b=1+1"],
    ["a byte order mark (U+FEFF)", "\ufeff=1+1"],
    ["a NUL", "\u0000=1+1"],
    ["a full-width equals sign (U+FF1D)", "\uff1d1+1"],
    ["a full-width plus sign (U+FF0B)", "\uff0b1+1"],
    ["a full-width hyphen-minus (U+FF0D)", "\uff0d1+1"],
    ["a full-width commercial at (U+FF20)", "\uff20SUM(A1)"],
    ["a small equals sign (U+FE66)", "\ufe661+1"],
  ])("a cell starting with %s gets a leading ' and is quoted", (_name, text) => {
    expect(csvCell(text)).toBe(`"'${text.replaceAll('"', '""')}"`);
  });

  it("keeps numbers numbers, negative ones included: a number cannot hold a formula", () => {
    expect(csvCell(-3)).toBe("-3");
    expect(csvCell(-0.25)).toBe("-0.25");
    expect(csvCell(1e21)).toBe("1e+21");
    // Text that looks like a negative number is still text someone typed.
    expect(csvCell("-3")).toBe(`"'-3"`);
    // Not a finite number: written as text, and neutralised like text.
    expect(csvCell(Number.NEGATIVE_INFINITY)).toBe(`"'-Infinity"`);
  });

  it("leaves a sign that is not at the start alone", () => {
    expect(csvCell("CP =1")).toBe("CP =1");
    expect(csvCell("a@b.example")).toBe("a@b.example");
  });
});

describe("csvRecord", () => {
  it("joins cells with commas and ends with CRLF", () => {
    expect(csvRecord(["id", -3, null, "=1"])).toBe(`id,-3,,"'=1"\r\n`);
  });
});
