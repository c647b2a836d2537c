// The list walk stops where the list ends, however the list changes under it (lib/partner-api/paginate.ts).
import { describe, expect, it } from "vitest";
import { walkPages, type ListPage } from "@/lib/partner-api/paginate";

/** A fake list endpoint: `pages[n]` is what page n answers, or a computed answer. */
function endpoint(answer: (page: number) => ListPage<number>) {
  const asked: number[] = [];
  return {
    asked,
    fetchPage: async (page: number) => {
      asked.push(page);
      return answer(page);
    },
  };
}

function listOf(items: number[], perPage: number) {
  return (page: number): ListPage<number> => ({
    data: items.slice(page * perPage, (page + 1) * perPage),
    meta: { currentPage: page, perPage, totalPageCount: Math.ceil(items.length / perPage), totalItemCount: items.length },
  });
}

async function collect<T>(walk: AsyncGenerator<{ page: number } & ListPage<T>>) {
  const items: T[] = [];
  for await (const page of walk) items.push(...page.data);
  return items;
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe("walkPages", () => {
  it("reads every page once and stops at totalPageCount, without asking for the page past the end", async () => {
    const api = endpoint(listOf(range(25), 10));
    expect(await collect(walkPages(api.fetchPage))).toEqual(range(25));
    expect(api.asked).toEqual([0, 1, 2]);
  });

  it("asks once for an empty list", async () => {
    const api = endpoint(listOf([], 10));
    expect(await collect(walkPages(api.fetchPage))).toEqual([]);
    expect(api.asked).toEqual([0]);
  });

  it("stops sooner when the list shrinks mid-walk (the newest totalPageCount wins)", async () => {
    const full = listOf(range(50), 10);
    const shrunk = listOf(range(22), 10);
    const api = endpoint((page) => (page < 1 ? full(page) : shrunk(page)));
    expect(await collect(walkPages(api.fetchPage))).toEqual([...range(10), 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22]);
    expect(api.asked).toEqual([0, 1, 2]);
  });

  it("stops at an empty page even when the envelope still names more pages", async () => {
    const api = endpoint((page) => ({
      data: page < 2 ? [page] : [],
      meta: { currentPage: page, perPage: 1, totalPageCount: 99, totalItemCount: 99 },
    }));
    expect(await collect(walkPages(api.fetchPage))).toEqual([0, 1]);
    expect(api.asked).toEqual([0, 1, 2]);
  });

  it("resumes from a checkpoint and reads no more than maxPages", async () => {
    const api = endpoint(listOf(range(100), 10));
    expect(await collect(walkPages(api.fetchPage, { startPage: 3, maxPages: 2 }))).toEqual(range(50).slice(30));
    expect(api.asked).toEqual([3, 4]);
  });
});
