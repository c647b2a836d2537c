// CSV for the dashboard's exports: RFC 4180 (fields separated by commas, records by CRLF; a field
// with a comma, a double quote, CR or LF is enclosed in double quotes, its quotes doubled), and
// safe to open in a spreadsheet. Hand-written rather than a dependency: quoting is these few lines,
// and the spreadsheet rule below has to run on every cell before quoting in any case.
import "server-only";

/**
 * A cell a spreadsheet might run as a formula (OWASP "CSV injection"). A charge point's name is
 * whatever the operator (or anyone with access to its portal) typed, so `=HYPERLINK(...)` in a name
 * must reach the sheet as text. OWASP's list is `=`, `+`, `-`, `@`, tab and CR, but spreadsheet apps
 * also read a formula behind leading whitespace they strip (a space, a no-break space, a line feed,
 * the other Unicode spaces) and accept the full-width and small forms of the signs (`＝` U+FF1D,
 * `﹦` U+FE66, ...). So the rule is by class, not by list: a cell is neutralised when it starts with
 *   - any whitespace or separator (`\s`, `\p{Z}`), control character (`\p{Cc}`) or invisible format
 *     character (`\p{Cf}`: zero-width space, BOM, direction marks), whatever follows it; or
 *   - a character whose compatibility form (NFKC) starts with `=`, `+`, `-` or `@`.
 * It gets a leading `'` (the sheet shows it as text, and the reader still sees what was typed) and is
 * always quoted, as OWASP advises, so no reader splits it at a tab or line break.
 */
const INVISIBLE_START = /^[\s\p{Z}\p{Cc}\p{Cf}]/u;
const FORMULA_SIGNS = /^[=+\-@]/;

function mayRunAsFormula(text: string): boolean {
  const first = text.codePointAt(0);
  if (first === undefined) return false;
  return INVISIBLE_START.test(text) || FORMULA_SIGNS.test(String.fromCodePoint(first).normalize("NFKC"));
}

export function csvCell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return "";
  // A finite number is written by JavaScript as digits, a sign, a point and an exponent only: it
  // cannot hold a formula, and a negative amount (a refund's cost) must stay a number in the sheet.
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  const text = String(value);
  if (mayRunAsFormula(text)) return `"'${text.replaceAll('"', '""')}"`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvRecord(values: readonly (string | number | null | undefined)[]): string {
  return `${values.map(csvCell).join(",")}\r\n`;
}
