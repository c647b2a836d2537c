// CSV for the dashboard's exports: RFC 4180 (fields separated by commas, records by CRLF; a field
// with a comma, a double quote, CR or LF is enclosed in double quotes, its quotes doubled), and
// safe to open in a spreadsheet. Hand-written rather than a dependency: quoting is these few lines,
// and the spreadsheet rule below has to run on every cell before quoting in any case.
import "server-only";

/**
 * A cell a spreadsheet would run as a formula (OWASP "CSV injection"): one starting with `=`, `+`,
 * `-`, `@`, a tab or a CR. A charge point's name is whatever the operator (or anyone with access to
 * its portal) typed, so `=HYPERLINK(...)` in a name must reach the sheet as text: a leading `'`
 * makes it text, and the reader still sees what was typed.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

export function csvCell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return "";
  let text = String(value);
  if (FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvRecord(values: readonly (string | number | null | undefined)[]): string {
  return `${values.map(csvCell).join(",")}\r\n`;
}
