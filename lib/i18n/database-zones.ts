// The time zones the dashboard may use: those Intl and PostgreSQL both know and read alike.
//
// Intl (ICU's copy of the tz database) draws a page's days, ranges and times; PostgreSQL (its own
// copy, or the system's) buckets the Overview's days with AT TIME ZONE (lib/dashboard/overview.ts).
// Some names Intl accepts disagree: PostgreSQL does not know them ("US/Pacific-New", ICU's old
// "AET"), and the Overview's query fails; or it reads them otherwise ("CET" is a fixed UTC+1 there,
// with summer time to Intl; a zone whose rules changed in a tz release only one of the two has),
// and the days shift. So a zone is accepted when PostgreSQL lists it (pg_timezone_names) and gives
// the UTC offset Intl gives at every sampled instant (docs/spec-gaps.md A214); verdicts are kept per
// process. UTC, the fallback, is always accepted.
import "server-only";
import { db } from "@/lib/db/client";
import { DEFAULT_TIME_ZONE, isTimeZone } from "./locales";

/**
 * Mid-January and mid-July of every year since 2000 (standard and summer time, whichever hemisphere),
 * the 1st of each of the last 12 months (a rule change that is recent), and now: some 70 instants,
 * so the settings page's whole list costs Intl a few tenths of a second, once per process. Up to now
 * only: the Overview shows what happened, and a later process compares a later difference.
 */
function sampleInstants(now = new Date()): Date[] {
  // Whole minutes: Intl's offset is read from the minute it shows.
  const instants: Date[] = [new Date(Math.floor(now.getTime() / 60_000) * 60_000)];
  for (let year = 2000; year <= now.getUTCFullYear(); year++) {
    for (const month of [0, 6]) instants.push(new Date(Date.UTC(year, month, 15, 12)));
  }
  for (let back = 0; back < 12; back++) instants.push(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1, 12)));
  return instants.filter((instant) => instant.getTime() <= now.getTime());
}

/** Intl's UTC offset of `zone` at `instant`, in minutes. */
function intlOffsetMinutes(format: Intl.DateTimeFormat, instant: Date): number {
  const part = Object.fromEntries(format.formatToParts(instant).map((p) => [p.type, p.value]));
  const local = Date.UTC(Number(part.year), Number(part.month) - 1, Number(part.day), Number(part.hour), Number(part.minute));
  return Math.round((local - instant.getTime()) / 60_000);
}

function intlAgrees(zone: string, instants: Date[], databaseOffsets: number[]): boolean {
  const format = new Intl.DateTimeFormat("en-US", { timeZone: zone, hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric" });
  return instants.every((instant, i) => intlOffsetMinutes(format, instant) === databaseOffsets[i]);
}

/** Every verdict so far. Only names Intl accepts are asked about, so it holds a few hundred at most. */
const verdicts = new Map<string, boolean>([[DEFAULT_TIME_ZONE, true]]);

/**
 * The names among `zones` that Intl and PostgreSQL read alike. One statement for the names not yet
 * judged (the settings page's list asks about them all once), none after.
 */
export async function acceptedTimeZones(zones: readonly (string | null | undefined)[]): Promise<ReadonlySet<string>> {
  const unjudged = [...new Set(zones.filter((zone): zone is string => isTimeZone(zone) && !verdicts.has(zone)))];
  if (unjudged.length > 0) {
    const instants = sampleInstants();
    // AT TIME ZONE as the Overview writes it: PostgreSQL reads a name that is also an abbreviation
    // ("CET", "EST") as the abbreviation's fixed offset, and that is what must agree with Intl.
    const rows = await db().$queryRaw<{ name: string; offsets: number[] }[]>`
      SELECT z.name, array_agg((extract(epoch FROM (t.at AT TIME ZONE z.name) - (t.at AT TIME ZONE 'UTC')) / 60)::int ORDER BY t.n) AS offsets
      FROM pg_timezone_names z CROSS JOIN unnest(${instants.map((instant) => instant.toISOString())}::timestamptz[]) WITH ORDINALITY AS t(at, n)
      WHERE z.name = ANY(${unjudged}::text[])
      GROUP BY z.name`;
    const known = new Map(rows.map((row) => [row.name, row.offsets]));
    for (const zone of unjudged) {
      const offsets = known.get(zone);
      verdicts.set(zone, offsets !== undefined && intlAgrees(zone, instants, offsets));
    }
  }
  return new Set(zones.filter((zone): zone is string => typeof zone === "string" && verdicts.get(zone) === true));
}
