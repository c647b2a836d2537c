// The sandbox's teams write (README decision 45) and the EVSE charge history beta (contract §4.3; decisions 46, 47):
// scopes, the per-operator switch, bad input, another operator's records.
import { beforeEach, describe, expect, it } from "vitest";
import { callApi, control, controlRaw, events, installAndRedeem, postForm, resetSandbox, setUpTestSandbox, type TestEnv } from "./helpers.js";

const env = setUpTestSandbox();
beforeEach(() => resetSandbox(env));

/** An install of `operatorId` granted `scopes` (set before it exists, so nothing is flagged). */
async function installWith(operatorId: number, scopes: string[]): Promise<string> {
  await control(env, "POST", "/app/scopes", { scopes });
  return (await installAndRedeem(env, operatorId)).access_token;
}

function patchTeam(sandbox: TestEnv, teamId: string | number, body: unknown, token: string, contentType = "application/json"): Promise<Response> {
  return fetch(`${sandbox.url}/api/v1/teams/${teamId}`, {
    method: "PATCH",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": contentType },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

type Team = { id: number; name: string; type: string; updatedAt: string };
const teamsOf = async (operatorId: number) => (await control<{ data: Team[] }>(env, "GET", `/operators/${operatorId}/teams`)).data;

describe("PATCH /api/v1/teams/{id}", () => {
  it("renames the caller's team with teams:write: 200 with the record, listed by GET /teams from then on", async () => {
    const token = await installWith(1001, ["charge-points:read", "teams:write"]);
    const [team] = await teamsOf(1001);
    const response = await patchTeam(env, team!.id, { name: "  Night shift  " }, token);
    expect(response.status).toBe(200);
    const renamed = (await response.json()) as Team;
    expect(renamed).toMatchObject({ id: team!.id, name: "Night shift", type: team!.type });
    expect(renamed.updatedAt).not.toBe(team!.updatedAt);
    const listed = (await (await callApi(env, "/teams?perPage=100", token)).json()) as { data: Team[] };
    expect(listed.data.find((t) => t.id === team!.id)?.name).toBe("Night shift");
  });

  it("refuses without teams:write (a read scope is not enough): 403 ACCESS_FORBIDDEN naming teams:write, nothing changed", async () => {
    const token = await installWith(1001, ["charge-points:read", "teams:read"]);
    const [team] = await teamsOf(1001);
    const response = await patchTeam(env, team!.id, { name: "Renamed" }, token);
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ errorCode: "ACCESS_FORBIDDEN", context: { requiredScope: "teams:write" } });
    expect((await teamsOf(1001))[0]!.name).toBe(team!.name);
  });

  it("answers bad input with 400 BAD_REQUEST and the field: empty, too long, control characters, unknown field, not JSON, bad id", async () => {
    const token = await installWith(1001, ["teams:write"]);
    const [team] = await teamsOf(1001);
    const cases: [string | number, unknown, string, string?][] = [
      [team!.id, { name: "   " }, "name"],
      [team!.id, { name: "x".repeat(101) }, "name"],
      [team!.id, { name: "a\u0007b" }, "name"],
      [team!.id, { name: 42 }, "name"],
      [team!.id, {}, "name"],
      [team!.id, { name: "ok", type: "operator" }, "body"],
      [team!.id, "{not json", "body"],
      [team!.id, "name=x", "body", "application/x-www-form-urlencoded"],
      ["abc", { name: "ok" }, "teamId"],
      ["-1", { name: "ok" }, "teamId"],
    ];
    for (const [id, body, field, contentType] of cases) {
      const response = await patchTeam(env, id, body, token, contentType);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(await response.json()).toMatchObject({ status: "BAD_REQUEST", errorCode: "BAD_REQUEST", context: { field } });
    }
    expect((await teamsOf(1001))[0]!.name).toBe(team!.name);
  });

  it("answers 404 for another operator's team and for an unknown one, the same way, and changes neither", async () => {
    const token = await installWith(1001, ["teams:write"]);
    const [other] = await teamsOf(1002);
    for (const id of [other!.id, 999_999]) {
      const response = await patchTeam(env, id, { name: "Mine now" }, token);
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ errorCode: "RESOURCE_NOT_FOUND", message: `No team ${id} for this operator` });
    }
    expect((await teamsOf(1002))[0]!.name).toBe(other!.name);
  });

  it("answers NEEDS_REAUTH for a flagged install before looking at the body", async () => {
    const token = await installWith(1001, ["teams:read"]);
    await control(env, "POST", "/app/scopes", { scopes: ["teams:read", "teams:write"] });
    const [team] = await teamsOf(1001);
    const response = await patchTeam(env, team!.id, { name: "" }, token);
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ errorCode: "NEEDS_REAUTH" });
  });
});

type ChargePoint = { id: number; evseId: string; connectors: { id: number }[] };
type Charge = { id: number; chargePointId: number; startedAt: string; consumedKwh: number };
type History = {
  data: { chargeId: number; connectorId: number; startedAt: string; energyKwh: number }[];
  meta: { count: number; totalCount: number; totalEnergyKwh: number };
};

/** The first charge point of the operator with at least `min` charges on its first connector. */
async function busyEvse(operatorId: number, min = 1): Promise<{ cp: ChargePoint; charges: Charge[] }> {
  const cps = (await control<{ data: ChargePoint[] }>(env, "GET", `/operators/${operatorId}/charge-points`)).data;
  const charges = (await control<{ data: Charge[] }>(env, "GET", `/operators/${operatorId}/charges`)).data;
  for (const cp of cps) {
    const mine = charges.filter((c) => c.chargePointId === cp.id && c.id % cp.connectors.length === 0);
    if (mine.length >= min) return { cp, charges: mine };
  }
  throw new Error("no charge point with charges");
}

const historyPath = (cp: ChargePoint, query = "", connectorId = cp.connectors[0]!.id) =>
  `/energy/charge-points/${cp.id}/evses/${encodeURIComponent(cp.evseId)}/connectors/${connectorId}/charges${query}`;

describe("GET /api/v1/energy/charge-points/{id}/evses/{evseId}/connectors/{connectorId}/charges (beta)", () => {
  it("is off by default: 403 FEATURE_NOT_ENABLED (not ACCESS_FORBIDDEN), then on after the operator's switch", async () => {
    const token = await installWith(1001, ["charge-points:read", "energy:read"]);
    const { cp, charges } = await busyEvse(1001, 2);
    const off = await callApi(env, historyPath(cp), token);
    expect(off.status).toBe(403);
    expect(await off.json()).toMatchObject({ status: "FORBIDDEN", errorCode: "FEATURE_NOT_ENABLED", context: { feature: "EVSE charge history" } });

    expect(await control(env, "PUT", "/operators/1001/energy-beta", { enabled: true })).toMatchObject({ operatorId: 1001, enabled: true, shape: "current" });
    const on = await callApi(env, historyPath(cp), token);
    expect(on.status).toBe(200);
    const body = (await on.json()) as History;
    // Derived from the operator's charges on that connector, oldest first.
    expect(body.data.map((r) => r.chargeId)).toEqual([...charges].sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.id - b.id).map((c) => c.id));
    expect(body.data[0]).toMatchObject({ connectorId: cp.connectors[0]!.id });
    expect(body.meta.totalEnergyKwh).toBeCloseTo(charges.reduce((s, c) => s + c.consumedKwh, 0), 2);

    // Another operator's switch is its own.
    const other = await control<{ enabled: boolean }>(env, "GET", "/operators/1002/energy-beta");
    expect(other.enabled).toBe(false);
  });

  it("needs energy:read: 403 ACCESS_FORBIDDEN naming it, even when the operator has the beta", async () => {
    const token = await installWith(1001, ["charge-points:read"]);
    await control(env, "PUT", "/operators/1001/energy-beta", { enabled: true });
    const { cp } = await busyEvse(1001);
    const response = await callApi(env, historyPath(cp), token);
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ errorCode: "ACCESS_FORBIDDEN", context: { requiredScope: "energy:read" } });
  });

  it("filters by from/to, orders and limits; empty values count as absent", async () => {
    const token = await installWith(1001, ["energy:read"]);
    await control(env, "PUT", "/operators/1001/energy-beta", { enabled: true });
    const { cp, charges } = await busyEvse(1001, 2);
    const sorted = [...charges].sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.id - b.id);
    const second = sorted[1]!.startedAt;
    const from = (await (await callApi(env, historyPath(cp, `?from=${encodeURIComponent(second)}&to=&state=`), token)).json()) as History;
    expect(from.data.map((r) => r.chargeId)).toEqual(sorted.slice(1).map((c) => c.id));
    const to = (await (await callApi(env, historyPath(cp, `?to=${encodeURIComponent(second)}`), token)).json()) as History;
    expect(to.data.map((r) => r.chargeId)).toEqual([sorted[0]!.id]);
    const desc = (await (await callApi(env, historyPath(cp, "?order=desc&limit=1"), token)).json()) as History;
    expect(desc.data.map((r) => r.chargeId)).toEqual([sorted.at(-1)!.id]);
    expect(desc.meta).toMatchObject({ count: 1, totalCount: sorted.length });
  });

  it("answers bad input with 400 BAD_REQUEST and the field, and an unknown or foreign EVSE with 404", async () => {
    const token = await installWith(1001, ["energy:read"]);
    await control(env, "PUT", "/operators/1001/energy-beta", { enabled: true });
    const { cp } = await busyEvse(1001);
    const bad: [string, string][] = [
      [historyPath(cp, "?from=yesterday"), "from"],
      [historyPath(cp, "?limit=0"), "limit"],
      [historyPath(cp, "?limit=1001"), "limit"],
      [historyPath(cp, "?order=sideways"), "order"],
      [historyPath(cp, "?state=flying"), "state"],
      [historyPath(cp, "?from=2025-02-01T00:00:00Z&to=2025-01-01T00:00:00Z"), "from"],
      [`/energy/charge-points/x/evses/${encodeURIComponent(cp.evseId)}/connectors/1/charges`, "chargePointId"],
      [`/energy/charge-points/${cp.id}/evses/${encodeURIComponent(cp.evseId)}/connectors/99999999999/charges`, "connectorId"],
    ];
    for (const [path, field] of bad) {
      const response = await callApi(env, path, token);
      expect(response.status, path).toBe(400);
      expect(await response.json()).toMatchObject({ errorCode: "BAD_REQUEST", context: { field } });
    }
    const foreign = (await control<{ data: ChargePoint[] }>(env, "GET", "/operators/1002/charge-points")).data[0]!;
    for (const path of [historyPath(foreign), historyPath(cp, "", 1), historyPath({ ...cp, evseId: "XX*NOPE*E1" })]) {
      const response = await callApi(env, path, token);
      expect(response.status, path).toBe(404);
      expect(await response.json()).toMatchObject({ errorCode: "RESOURCE_NOT_FOUND" });
    }
  });

  it("answers in a changed beta shape when a test asks for one (contract §9: the structure may change)", async () => {
    const token = await installWith(1001, ["energy:read"]);
    await control(env, "PUT", "/operators/1001/energy-beta", { enabled: true, shape: "changed" });
    const { cp } = await busyEvse(1001);
    const body = (await (await callApi(env, historyPath(cp), token)).json()) as Record<string, unknown>;
    expect(body).not.toHaveProperty("data");
    expect(body).toHaveProperty("sessions");
  });

  it("the control API and the console switch it per operator; bad requests are refused", async () => {
    expect((await controlRaw(env, "PUT", "/operators/1001/energy-beta", { enabled: "yes" })).status).toBe(400);
    expect((await controlRaw(env, "PUT", "/operators/999/energy-beta", { enabled: true })).status).toBe(404);
    const page = await (await fetch(`${env.url}/console`)).text();
    expect(page).toContain("Beta: EVSE charge history");
    const saved = await postForm(`${env.url}/console/energy-beta`, { operatorId: "1002", enabled: "true" });
    expect(saved.status).toBe(303);
    expect(await control(env, "GET", "/operators/1002/energy-beta")).toMatchObject({ enabled: true });
    expect((await postForm(`${env.url}/console/energy-beta`, { operatorId: "999", enabled: "true" })).status).toBe(400);
    expect((await events(env, "?type=control")).some((e) => e.detail.action === "energy_beta" && e.detail.operator_id === 1002)).toBe(true);
  });
});
