// Deletion detection: a record no longer listed is marked deleted, never silently kept.
//
// A full pass stamps every record it sees with its pass id and the page it was on. At the end of a
// completed full pass, an unseen record is marked deleted only when the pass PROVES it was gone:
//   - the seen records just before and just after it (in id order, the list's order) were on the
//     same page: one page is one consistent, sorted slice of the list, so the record was not in it;
//   - or it sorts before the first record seen, and that one was on page 0 (which starts the list);
//   - or it sorts after the last record seen, and that one was on the page that ended the list;
//   - or page 0 was empty: the list was.
// (Records the install's configuration does not keep are never stamped, which is why each rule asks
// where the neighbouring stamped record was, not merely whether there is one.)
// An unseen record between two pages is NOT marked: a record deleted earlier in the list while the
// pass walked (or while it waited for its next run, checkpointed) shifts every later record one
// place up, so one record can slip from the next page to the page already read. Marking it would
// report a live record deleted; it is left for the next full pass, where page boundaries fall
// elsewhere. A record seen again is un-deleted by the upsert (lib/sync/<resource>.ts).
import "server-only";
import type { Tx } from "@/lib/db/client";
import { Prisma } from "@/lib/db/generated/client";
import type { SyncResource, SyncedRow } from "./resource";

export async function markUnlistedDeleted(
  tx: Tx,
  resource: SyncResource<SyncedRow>,
  options: {
    installRowId: string;
    passId: string;
    /** The page that ended the list (it said it was the last), when the pass read it; else null. */
    endPage: number | null;
    /** Page 0 was empty. */
    listWasEmpty: boolean;
    now: Date;
  },
): Promise<number> {
  // The table name is a constant of the resource (never input); everything else is a parameter.
  const { installRowId, passId, endPage, listWasEmpty, now } = options;
  const table = Prisma.raw(resource.table);
  return tx.$executeRaw`
    WITH ordered AS (
      SELECT external_id,
        max(seen_page) FILTER (WHERE seen_pass_id = ${passId}::uuid)
          OVER (ORDER BY length(external_id), external_id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS page_before,
        -- "The rows after this one" written as "the rows before it in the reverse order": a frame
        -- that starts at UNBOUNDED PRECEDING grows row by row, while one that starts at 1 FOLLOWING
        -- moves, and min() cannot drop a row, so PostgreSQL would recompute it for every row:
        -- quadratic, 43 s for the large operator's 20,000 charges (npm run bench -- sync).
        min(seen_page) FILTER (WHERE seen_pass_id = ${passId}::uuid)
          OVER (ORDER BY length(external_id) DESC, external_id DESC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS page_after
      FROM ${table}
      WHERE install_row_id = ${installRowId}::uuid
    )
    UPDATE ${table} AS t SET deleted_at = ${now}, updated_at = ${now}
    FROM ordered AS o
    WHERE t.install_row_id = ${installRowId}::uuid AND t.external_id = o.external_id
      AND t.deleted_at IS NULL AND t.seen_pass_id IS DISTINCT FROM ${passId}::uuid
      AND (
        o.page_before = o.page_after
        OR (o.page_before IS NULL AND o.page_after = 0)
        OR (o.page_after IS NULL AND o.page_before = ${endPage}::int)
        OR (o.page_before IS NULL AND o.page_after IS NULL AND ${listWasEmpty})
      )`;
}
