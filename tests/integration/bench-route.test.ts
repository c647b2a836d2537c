// The bench's empty route handler (app/api/bench/empty/route.ts) exists only for `npm run bench`,
// which turns it on with BENCH_EMPTY_ROUTE=on. Anywhere else, production included, it is not there.
import { describe, expect, it } from "vitest";
import { stack } from "../helpers/stack";

describe("POST /api/bench/empty", () => {
  it("answers 404 unless the bench turned it on", async () => {
    const response = await fetch(`${stack.appUrl}/api/bench/empty`, { method: "POST", body: "{}" });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ status: "not_found" });
  });
});
