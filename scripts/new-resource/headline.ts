// `npm run new:resource -- <name> --headline`: the resource's figure among the Overview's headlines
// (SyncResource.overviewHeadline, lib/sync/resource.ts), and the lines of the section's integration
// test that find it there. A count of the copy's records: those whose first timestamp field falls in
// the Overview's days, in the operator's zone, or all of them when the resource has no timestamp.
import type { Field } from "./fields";
import type { ResourceNames } from "./names";

export function headlineTokens(names: ResourceNames, fields: readonly Field[], enabled: boolean): Record<string, string> {
  if (!enabled) return { __headlineImport__: "", __headline__: "", __cellsImports__: "", __headlineShown__: "", __headlineNotShared__: "", __headlineHelper__: "" };
  const at = fields.find((field) => field.type === "timestamp");
  const testId = `headline-${names.snake}`;
  const read = at
    ? `    async read(installRowId, { from, to, timeZone }) {
      // The Overview's days in the operator's zone, as lib/dashboard/overview.ts bounds its own figures.
      const [row] = await db().$queryRaw<{ count: number }[]>\`
        SELECT count(*)::int AS count FROM synced_${names.snake}
        WHERE install_row_id = \${installRowId}::uuid AND deleted_at IS NULL
          AND ${at.column} >= (\${from}::date::timestamp AT TIME ZONE \${timeZone})
          AND ${at.column} < ((\${to}::date + 1)::timestamp AT TIME ZONE \${timeZone})\`;
      return row?.count ?? 0;
    },`
    : `    read: (installRowId) => db().synced${names.singular}.count({ where: { installRowId, deletedAt: null } }),`;
  // The test asks the Overview for one day (the first record's, in the tests' zone) when the count is
  // bounded by the range, so a range read in UTC, or not at all, does not pass.
  const shown = at
    ? `

    // Its headline on the Overview: the records of one day, that day in the operator's zone.
    const dayOf = (instant: string) => new Date(instant).toLocaleDateString("en-CA", { timeZone: ZONE });
    const day = dayOf(expected[0]!.${at.name});
    const overview = await dashboardPage(\`/dashboard?from=\${day}&to=\${day}\`, [install.sessionCookie, ...display].join("; "));
    expect(headline(overview.html)).toBe(format.count(expected.filter((record) => dayOf(record.${at.name}) === day).length));`
    : `

    // Its headline on the Overview: every record in the copy.
    const overview = await dashboardPage("/dashboard", [install.sessionCookie, ...display].join("; "));
    expect(headline(overview.html)).toBe(format.count(expected.length));`;
  return {
    __headlineImport__: 'import { db } from "@/lib/db/client";\n',
    __headline__: `
  // Its figure among the Overview's headlines: "Not shared" without the scope, "—" until the first
  // pass has ended (lib/dashboard/overview.ts).
  overviewHeadline: {
    label: "${names.title}",
    detail: "${at ? "in the range" : "in the copy"}",
${read}
  },`,
    __cellsImports__: at ? ", format, ZONE" : ", format",
    __headlineShown__: shown,
    __headlineNotShared__: `
    expect(headline((await dashboardPage("/dashboard", install.sessionCookie)).html)).toBe("Not shared");`,
    __headlineHelper__: `

/** The resource's headline figure on the Overview, as rendered (without React's text markers). */
function headline(html: string): string | undefined {
  return new RegExp('data-testid="${testId}-value"[^>]*>(.*?)</p>').exec(html.replace(/<!-- -->/g, ""))?.[1];
}`,
  };
}
