// Walking a list of the partner API page by page (public-facts.md "Lists and pagination": `page`
// from 0, `perPage` 1 to 100, and a body `{ data, meta: { currentPage, perPage, totalPageCount, ... } }`).
//
// A list can change while it is walked (a charge point removed, sessions added), so the walk trusts
// each page's own envelope, not the first one's: it stops at an empty page, at the last page the
// newest `totalPageCount` names (a list that shrank ends sooner), and after `maxPages` whatever the
// service says, so a misbehaving answer cannot keep a job walking for ever. Each page is one request
// through lib/partner-api/client.ts, so the install's rate budget paces the walk.
import type { z } from "zod";
import type { ListMetaSchema } from "./schemas";

export type ListPage<T> = { data: T[]; meta: z.infer<typeof ListMetaSchema> };

export type WalkOptions = {
  /** The first page to read (a checkpoint saved by an earlier walk). Default 0. */
  startPage?: number;
  /** Pages to read at most in this walk. Default: no limit but the list's own end. */
  maxPages?: number;
};

/** Yields each page with its number; the caller may stop at any point (e.g. to save a checkpoint). */
export async function* walkPages<T>(fetchPage: (page: number) => Promise<ListPage<T>>, options: WalkOptions = {}): AsyncGenerator<{ page: number } & ListPage<T>> {
  const maxPages = options.maxPages ?? Number.POSITIVE_INFINITY;
  let page = options.startPage ?? 0;
  for (let read = 0; read < maxPages; read += 1, page += 1) {
    const answer = await fetchPage(page);
    if (answer.data.length === 0) return;
    yield { page, ...answer };
    if (page + 1 >= answer.meta.totalPageCount) return;
  }
}
