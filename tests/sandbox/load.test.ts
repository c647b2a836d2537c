// What the sandbox offers load tests (README decisions 34 and 39): more operators than the three described
// ones (SANDBOX_OPERATORS), so many installs can exist at once; more charges per operator
// (SANDBOX_CHARGES_PER_OPERATOR), so a bench can walk a long paginated list; and how many refreshes the
// identity provider is processing at once (token statistics).
import { describe, expect, it } from "vitest";
import { buildSeed } from "../../sandbox/seed.js";
import { MINIMAL_SANDBOX_ENV, callApi, control, installAndRedeem, refreshTokens, resetSandbox, setUpTestSandbox, type TokenSet } from "./helpers.js";

type Operators = { operators: { id: number; name: string; slug: string; chargePointCount: number; chargeCount: number }[] };
type GlobalStats = { refreshes_issued: number; refreshes_in_flight: number; max_refreshes_in_flight: number };

describe("SANDBOX_OPERATORS", () => {
  const env = setUpTestSandbox({ operatorCount: 25 });

  it("adds plain operators after the three described ones, which stay exactly as they were", async () => {
    const { operators } = await control<Operators>(env, "GET", "/operators");
    expect(operators).toHaveLength(26); // 25 seeded, then the large operator (decision 40)
    expect(operators.slice(0, 3).map((o) => [o.id, o.chargePointCount])).toEqual([
      [1001, 23],
      [1002, 7],
      [1003, 41],
    ]);
    expect(operators[3]).toMatchObject({ id: 1004, name: "Extra Operator 4", slug: "extra-operator-4", chargePointCount: 3, chargeCount: 2 });
    expect(operators[24]).toMatchObject({ id: 1025, slug: "extra-operator-25" });
    expect(operators.at(-1)).toMatchObject({ id: 2001, slug: "nordic-mega-charging" });
    expect(new Set(operators.map((o) => o.name)).size).toBe(26);
    // The three described operators' data does not depend on how many others there are.
    expect(buildSeed(undefined, 25).operators.slice(0, 3)).toEqual(buildSeed().operators);
  });

  it("an extra operator installs the app and its API serves that operator's records only", async () => {
    const tokens = await installAndRedeem(env, 1020);
    const response = await callApi(env, "/charge-points", tokens.access_token);
    expect(response.status).toBe(200);
    const { data } = (await response.json()) as { data: { id: number; evseId: string }[] };
    const { data: expected } = await control<{ data: { id: number }[] }>(env, "GET", "/operators/1020/charge-points");
    expect(data.map((cp) => cp.id)).toEqual(expected.map((cp) => cp.id));
    expect(data).toHaveLength(3);
  });
});

describe("refreshes in flight (token statistics)", () => {
  const env = setUpTestSandbox({ operatorCount: 8, refreshDelayMs: 400 });

  it("counts the refreshes being processed now and the most at once since the reset", async () => {
    await resetSandbox(env);
    const installs: TokenSet[] = [];
    for (const operatorId of [1001, 1002, 1003, 1004, 1005, 1006]) installs.push(await installAndRedeem(env, operatorId));
    const idle = await control<GlobalStats>(env, "GET", "/token-stats");
    expect(idle).toMatchObject({ refreshes_in_flight: 0, max_refreshes_in_flight: 0 });

    // Five at once, each held 400 ms by SANDBOX_REFRESH_DELAY_MS; then one more on its own.
    const burst = installs.slice(0, 5).map((t) => refreshTokens(env, t.refresh_token));
    let during: GlobalStats | undefined;
    while (!during || during.refreshes_in_flight < 5) during = await control<GlobalStats>(env, "GET", "/token-stats");
    expect(during).toMatchObject({ refreshes_in_flight: 5, refreshes_issued: 0 });
    expect((await Promise.all(burst)).map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect((await refreshTokens(env, installs[5]!.refresh_token)).status).toBe(200);

    expect(await control<GlobalStats>(env, "GET", "/token-stats")).toMatchObject({ refreshes_issued: 6, refreshes_in_flight: 0, max_refreshes_in_flight: 5 });
    await resetSandbox(env);
    expect(await control<GlobalStats>(env, "GET", "/token-stats")).toMatchObject({ refreshes_in_flight: 0, max_refreshes_in_flight: 0 });
  });
});

describe("SANDBOX_OPERATORS in the environment", () => {
  const base = MINIMAL_SANDBOX_ENV;

  it("defaults to the three described operators, takes up to 200, and refuses fewer than three", async () => {
    const { ConfigError, loadConfig } = await import("../../sandbox/config.js");
    expect(loadConfig(base).operatorCount).toBe(3);
    expect(loadConfig({ ...base, SANDBOX_OPERATORS: "60" }).operatorCount).toBe(60);
    expect(() => loadConfig({ ...base, SANDBOX_OPERATORS: "2" })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, SANDBOX_OPERATORS: "201" })).toThrow(/SANDBOX_OPERATORS/);
  });

  it("SANDBOX_CHARGES_PER_OPERATOR: unset keeps the seed's own counts; 1 to 100,000, and at most 2,000,000 charges in all", async () => {
    const { ConfigError, loadConfig } = await import("../../sandbox/config.js");
    expect(loadConfig(base).chargesPerOperator).toBeUndefined();
    expect(loadConfig({ ...base, SANDBOX_CHARGES_PER_OPERATOR: "5000" }).chargesPerOperator).toBe(5000);
    expect(() => loadConfig({ ...base, SANDBOX_CHARGES_PER_OPERATOR: "0" })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, SANDBOX_CHARGES_PER_OPERATOR: "100001" })).toThrow(/SANDBOX_CHARGES_PER_OPERATOR/);
    expect(() => loadConfig({ ...base, SANDBOX_OPERATORS: "30", SANDBOX_CHARGES_PER_OPERATOR: "70000" })).toThrow(/at most 2,000,000/);
  });
});

describe("SANDBOX_CHARGES_PER_OPERATOR", () => {
  it("gives every operator exactly that many charges; the seed's own come first, unchanged, and the rest are deterministic", () => {
    const plain = buildSeed(undefined, 4);
    const large = buildSeed(undefined, 4, 3000);
    expect(large.operators.map((o) => o.charges.length)).toEqual([3000, 3000, 3000, 3000]);
    for (const [index, data] of large.operators.entries()) {
      const own = plain.operators[index]!;
      expect(data.charges.slice(0, own.charges.length)).toEqual(own.charges);
      expect({ ...data, charges: [] }).toEqual({ ...own, charges: [] }); // teams and charge points untouched
      const ids = data.charges.map((c) => c.id);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(new Set(ids).size).toBe(3000);
      const chargePointIds = new Set(data.chargePoints.map((cp) => cp.id));
      expect(data.charges.every((c) => chargePointIds.has(c.chargePointId) && c.currency.identifier === data.charges[0]!.currency.identifier)).toBe(true);
    }
    expect(buildSeed(undefined, 4, 3000)).toEqual(large); // the same on every start
    expect(buildSeed(undefined, 4, 10).operators[0]!.charges).toEqual(plain.operators[0]!.charges.slice(0, 10));
  });

  const env = setUpTestSandbox({ chargesPerOperator: 2500 });

  it("the API pages through the long list and the control API reports its size", async () => {
    const tokens = await installAndRedeem(env, 1001);
    const { operators } = await control<Operators>(env, "GET", "/operators");
    // The large operator keeps its own 20,000 (decision 40): the setting is for the seeded ones.
    expect(operators.map((o) => o.chargeCount)).toEqual([2500, 2500, 2500, 20_000]);
    const last = (await (await callApi(env, "/charges?page=24&perPage=100", tokens.access_token)).json()) as { data: { id: number }[]; meta: Record<string, number> };
    expect(last.meta).toEqual({ currentPage: 24, perPage: 100, itemCount: 100, totalPageCount: 25, totalItemCount: 2500 });
    expect(last.data.at(-1)?.id).toBe(1_002_500);
    const beyond = (await (await callApi(env, "/charges?page=25&perPage=100", tokens.access_token)).json()) as { data: unknown[] };
    expect(beyond.data).toEqual([]);
  });
});
