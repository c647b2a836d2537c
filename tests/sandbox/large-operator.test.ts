// The large seeded operator (README decision 40): "Nordic Mega Charging", 500 charge points and 20,000 charges, for
// syncs and benches that need a long list. Built on first use only, deterministic, and listed in id order.
import { describe, expect, it } from "vitest";
import { createSandbox } from "../../sandbox/server.js";
import { buildLargeOperator, buildSeed } from "../../sandbox/seed.js";
import { callApi, control, installAndRedeem, setUpTestSandbox } from "./helpers.js";

const env = setUpTestSandbox();

type ListBody = { data: { id: number; chargePointId?: number; siteId?: number | null; teamId?: number }[]; meta: Record<string, number> };

describe("Nordic Mega Charging (operator 2001)", () => {
  it("has 20,000 charges over 500 charge points, several teams and sites, the same on every build", () => {
    const large = buildLargeOperator();
    expect(large.operator).toEqual({ id: 2001, name: "Nordic Mega Charging", slug: "nordic-mega-charging" });
    expect(large.charges).toHaveLength(20_000);
    expect(large.chargePoints).toHaveLength(500);
    expect(large.teams.length).toBeGreaterThanOrEqual(5);
    expect(new Set(large.chargePoints.map((cp) => cp.siteId).filter((id) => id !== null)).size).toBeGreaterThanOrEqual(20);
    const ids = large.charges.map((c) => c.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(20_000);
    const chargePointIds = new Set(large.chargePoints.map((cp) => cp.id));
    expect(large.charges.every((c) => chargePointIds.has(c.chargePointId))).toBe(true);
    // Its ids are apart from every seeded operator's, even with 200 of them.
    const seededIds = new Set(buildSeed(undefined, 200).operators.flatMap((o) => [...o.charges.map((c) => c.id), ...o.chargePoints.map((cp) => cp.id)]));
    expect([...ids, ...chargePointIds].some((id) => seededIds.has(id))).toBe(false);
    expect(JSON.stringify(buildLargeOperator())).toBe(JSON.stringify(large));
  });

  it("is built only when first used, so a start that never touches it does not pay for it", async () => {
    const sandbox = await createSandbox({ ...env.config }, { log: () => {} });
    try {
      expect(sandbox.ctx.operators.largeBuilt).toBe(false);
      // The operator list and the portal name it without building it.
      const listed = (await (await sandbox.app.request("/_sandbox/operators")).json()) as { operators: { id: number; chargeCount: number }[] };
      expect(listed.operators.at(-1)).toMatchObject({ id: 2001, chargeCount: 20_000 });
      expect(await (await sandbox.app.request("/portal")).text()).toContain("Nordic Mega Charging");
      expect(sandbox.ctx.operators.largeBuilt).toBe(false);
      expect(sandbox.ctx.operators.find(2001)?.charges).toHaveLength(20_000);
      expect(sandbox.ctx.operators.largeBuilt).toBe(true);
    } finally {
      await sandbox.close();
    }
  });

  it("installs through the portal; the API pages through its 20,000 charges in id order", async () => {
    const tokens = await installAndRedeem(env, 2001);
    const first = (await (await callApi(env, "/charges?perPage=100", tokens.access_token)).json()) as ListBody;
    expect(first.meta).toEqual({ currentPage: 0, perPage: 100, itemCount: 100, totalPageCount: 200, totalItemCount: 20_000 });
    const last = (await (await callApi(env, "/charges?page=199&perPage=100", tokens.access_token)).json()) as ListBody;
    expect(last.data.at(-1)?.id).toBe(first.data[0]!.id + 19_999);
    expect(last.data.map((c) => c.id)).toEqual([...last.data.map((c) => c.id)].sort((a, b) => a - b));
    const points = (await (await callApi(env, "/charge-points?page=4&perPage=100", tokens.access_token)).json()) as ListBody;
    expect(points.meta).toMatchObject({ itemCount: 100, totalItemCount: 500 });
    const { total } = await control<{ total: number }>(env, "GET", "/operators/2001/charges");
    expect(total).toBe(20_000);
  });
});
