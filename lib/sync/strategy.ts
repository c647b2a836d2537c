// How each pass finds new and changed records: the one place to change when the service offers a
// filter (docs/spec-gaps.md, "incremental sync").
//
// The contract shows no filter parameters for lists (contract §4.2: `/charges` "Parameters: not
// shown"); public-facts.md gives `page` and `perPage` only, and the sandbox, like the service's
// reference, lists records in id order. New records get higher ids, so they appear at the end. So:
//   - a FULL pass reads the whole list from page 0: it picks up every change and, once complete,
//     lets lib/sync/deletions.ts mark the records no longer listed;
//   - an INCREMENTAL pass (charges only, the long list) starts at the page that held the highest id
//     already synced, and reads to the end: every new record, for a page or two of requests. A
//     charge still open (not stopped) that started within OPEN_CHARGE_LOOKBACK_MS moves the start
//     back to its page, since its state, energy and cost are still changing;
//   - a full pass runs when the last one is older than SYNC_FULL_PASS_INTERVAL_HOURS (24 h), so
//     changes to older records (a charge completing, a cost corrected) and deletions are at most
//     that late. Charge points and teams are short lists: every pass is full.
// With a real `updatedSince` filter, `choosePassKind` stays and the incremental pass's request
// carries the filter from the last pass's start instead of a start page (`findIncrementalStart`).
import "server-only";

export type PassKind = "full" | "incremental";

/**
 * Charges that started this recently and have not stopped are re-read by every incremental pass: a
 * charging session is the record most likely to change, and a dashboard showing it "charging" until
 * the next full pass would be wrong for hours. Older open charges (abandoned, never closed) wait for
 * the full pass, so one stale session cannot make every pass a full one.
 */
export const OPEN_CHARGE_LOOKBACK_MS = 48 * 3_600_000;

/** A record and its position in the list (from 0), as far as the app knows it. */
export type ListMark = { id: string; position: number };

export type CheckpointFacts = {
  lastFullPassEndedAt: Date | null;
  highWaterId: string | null;
  highWaterPosition: number | null;
};

export function choosePassKind(options: { incremental: boolean; checkpoint: CheckpointFacts | null; now: Date; fullPassEveryMs: number }): PassKind {
  const { incremental, checkpoint, now, fullPassEveryMs } = options;
  if (!incremental || !checkpoint?.lastFullPassEndedAt) return "full";
  if (checkpoint.highWaterId === null || checkpoint.highWaterPosition === null) return "full";
  return now.getTime() - checkpoint.lastFullPassEndedAt.getTime() >= fullPassEveryMs ? "full" : "incremental";
}

/**
 * Orders two of the service's ids as the list does: int64 ids by value (public-facts.md), anything
 * else by length, then text (the same order as `ORDER BY length(id), id` in lib/sync/deletions.ts).
 */
export function compareIds(a: string, b: string): number {
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) {
    const [x, y] = [BigInt(a), BigInt(b)];
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

/** Where an incremental pass starts looking: the high-water mark, or an open charge before it. */
export function incrementalTarget(highWater: ListMark, oldestOpen: ListMark | null): ListMark {
  return oldestOpen && compareIds(oldestOpen.id, highWater.id) < 0 ? oldestOpen : highWater;
}

/** The first id on a page, or null for an empty page. */
export type PageProbe = (page: number) => Promise<string | null>;

/**
 * The page an incremental pass starts at: the one that holds the target record (incrementalTarget).
 * Its known position gives the page; records deleted before it since then move it to an earlier
 * page, so while the page starts past that id (or is past the list's end), look one page earlier.
 * Records are never missed: a position too low only starts the pass early, which reads a page more.
 */
export async function findIncrementalStart(probe: PageProbe, target: ListMark, perPage: number): Promise<number> {
  let page = Math.floor(target.position / perPage);
  while (page > 0) {
    const firstId = await probe(page);
    if (firstId !== null && compareIds(firstId, target.id) <= 0) break;
    page -= 1;
  }
  return page;
}
