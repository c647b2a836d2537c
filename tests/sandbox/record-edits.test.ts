// Deleting and changing an operator's records through the control API (README decision 44), for an app's
// deletion-detection and change tests: a deleted record is no longer listed, a changed one shows its new fields.
import { beforeEach, describe, expect, it } from "vitest";
import { advanceClock, callApi, control, controlRaw, installAndRedeem, resetSandbox, setUpTestSandbox } from "./helpers.js";

const env = setUpTestSandbox();
beforeEach(() => resetSandbox(env));

type Listed<T> = { data: T[]; meta: { totalItemCount: number } };
type ChargePoint = { id: number; name: string | null; state: string; updatedAt: string };
type Charge = { id: number; state: string; consumedKwh: number; chargePointId: number };
type Team = { id: number; name: string; type: string; updatedAt: string };

async function list<T>(token: string, path: string): Promise<Listed<T>> {
  return (await (await callApi(env, `${path}${path.includes("?") ? "&" : "?"}perPage=100`, token)).json()) as Listed<T>;
}

describe("DELETE /_sandbox/operators/:id/<kind>/:recordId", () => {
  it("a deleted charge is no longer listed by the API or the control API; restoring lists it again", async () => {
    const tokens = await installAndRedeem(env, 1001);
    const before = await list<Charge>(tokens.access_token, "/charges");
    const victim = before.data[5]!;
    expect(await control(env, "DELETE", `/operators/1001/charges/${victim.id}`)).toEqual({ deleted: { operatorId: 1001, kind: "charges", id: victim.id } });

    const after = await list<Charge>(tokens.access_token, "/charges");
    expect(after.meta.totalItemCount).toBe(35);
    expect(after.data.map((c) => c.id)).toEqual(before.data.map((c) => c.id).filter((id) => id !== victim.id));
    expect((await control<{ total: number }>(env, "GET", "/operators/1001/charges")).total).toBe(35);
    expect((await controlRaw(env, "DELETE", `/operators/1001/charges/${victim.id}`)).status).toBe(404);

    expect(await control(env, "POST", `/operators/1001/charges/${victim.id}/restore`)).toEqual({ record: victim });
    expect((await list<Charge>(tokens.access_token, "/charges")).data).toEqual(before.data);
    expect((await controlRaw(env, "POST", `/operators/1001/charges/${victim.id}/restore`)).status).toBe(404);
  });

  it("deletes charge points and teams; another operator's lists are untouched", async () => {
    await control(env, "POST", "/app/scopes", { scopes: ["charge-points:read", "charge-transactions:read", "teams:read"] });
    const tokens = await installAndRedeem(env, 1003);
    const other = await installAndRedeem(env, 1001);
    const points = await list<ChargePoint>(tokens.access_token, "/charge-points");
    await control(env, "DELETE", `/operators/1003/charge-points/${points.data[0]!.id}`);
    const teams = await list<Team>(tokens.access_token, "/teams");
    await control(env, "DELETE", `/operators/1003/teams/${teams.data[1]!.id}`);
    expect((await list<ChargePoint>(tokens.access_token, "/charge-points")).meta.totalItemCount).toBe(40);
    expect((await list<Team>(tokens.access_token, "/teams")).data.map((t) => t.id)).toEqual(teams.data.filter((_, i) => i !== 1).map((t) => t.id));
    expect((await list<ChargePoint>(other.access_token, "/charge-points")).meta.totalItemCount).toBe(23);
    // A record of another operator is not this operator's to delete.
    expect((await controlRaw(env, "DELETE", `/operators/1001/charge-points/${points.data[1]!.id}`)).status).toBe(404);
  });
});

describe("PATCH /_sandbox/operators/:id/<kind>/:recordId", () => {
  it("renames a team and changes a charge point's state; updatedAt is the sandbox clock's now", async () => {
    await control(env, "POST", "/app/scopes", { scopes: ["charge-points:read", "charge-transactions:read", "teams:read"] });
    await advanceClock(env, 86_400); // a day later than the seed's timestamps' start: updatedAt must move to the clock's now
    const tokens = await installAndRedeem(env, 1002);
    const { now } = await control<{ now: string }>(env, "GET", "/clock");
    const team = (await list<Team>(tokens.access_token, "/teams")).data[0]!;
    const renamed = await control<{ record: Team }>(env, "PATCH", `/operators/1002/teams/${team.id}`, { name: "Fjordline Fleet Ops" });
    expect(renamed.record).toEqual({ ...team, name: "Fjordline Fleet Ops", updatedAt: expect.any(String) });
    expect(Date.parse(renamed.record.updatedAt)).toBeGreaterThanOrEqual(Date.parse(now));
    expect((await list<Team>(tokens.access_token, "/teams")).data[0]).toEqual(renamed.record);

    const point = (await list<ChargePoint>(tokens.access_token, "/charge-points")).data[2]!;
    const changed = await control<{ record: ChargePoint }>(env, "PATCH", `/operators/1002/charge-points/${point.id}`, { state: "maintenance", name: null });
    expect(changed.record).toMatchObject({ id: point.id, state: "maintenance", name: null });
    expect(changed.record.updatedAt).not.toBe(point.updatedAt);
    // Changes add up; a charge has no updatedAt and gets none.
    await control(env, "PATCH", `/operators/1002/charge-points/${point.id}`, { isActive: false });
    expect((await list<ChargePoint>(tokens.access_token, "/charge-points")).data[2]).toMatchObject({ state: "maintenance", name: null, isActive: false });
    const charge = (await list<Charge>(tokens.access_token, "/charges")).data[0]!;
    const done = await control<{ record: Charge }>(env, "PATCH", `/operators/1002/charges/${charge.id}`, { state: "completed", consumedKwh: 12.5 });
    expect(done.record).toEqual({ ...charge, state: "completed", consumedKwh: 12.5 });
  });

  it.each([
    ["an unknown field", "/operators/1001/teams/100101", { colour: "red" }, /Expected any of \{"name": string/],
    ["no field", "/operators/1001/teams/100101", {}, /no field given/],
    ["a bad state", "/operators/1001/charge-points/10001", { state: "on-fire" }, /state: Invalid option/],
    ["a bad kind", "/operators/1001/sites/1", { name: "x" }, /charge-points\|charges\|teams/],
    ["a bad id", "/operators/1001/charges/abc", { state: "completed" }, /positive integer ids/],
  ])("answers %s with 400 and what was expected", async (_what, path, body, message) => {
    const response = await controlRaw(env, "PATCH", path, body);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toMatch(message);
  });

  it("404 for an unknown operator or record; edits survive a restart and a reset clears them", async () => {
    expect((await controlRaw(env, "PATCH", "/operators/4242/teams/1", { name: "x" })).status).toBe(404);
    expect((await controlRaw(env, "PATCH", "/operators/1001/teams/999", { name: "x" })).status).toBe(404);
    await control(env, "PATCH", "/operators/1001/teams/100101", { name: "Renamed" });
    await control(env, "DELETE", "/operators/1001/charges/1000001");
    await env.restart();
    const charges = await control<{ total: number; data: { id: number }[] }>(env, "GET", "/operators/1001/charges");
    expect(charges.total).toBe(35);
    expect((await control<{ data: Team[] }>(env, "GET", "/operators/1001/teams")).data[0]?.name).toBe("Renamed");
    await resetSandbox(env);
    expect((await control<{ total: number }>(env, "GET", "/operators/1001/charges")).total).toBe(36);
    expect((await control<{ data: Team[] }>(env, "GET", "/operators/1001/teams")).data[0]?.name).toBe("Northwind Operations");
  });
});
