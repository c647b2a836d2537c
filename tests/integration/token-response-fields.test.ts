// Tolerant token responses (issue 8, defence in depth). The contract promises `scope` and
// `expires_in` (§2), but RFC 6749 §5.1 lets a server leave both out, and the app can live without
// either: an install must never fail after its code is spent for a field the app can do without.
// The sandbox's switches: POST /_sandbox/idp-behaviour {"omitScope": true, "omitExpiresIn": true}.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { resultOf, runAppWorker } from "../helpers/app-process";
import { closeSql, control, expireAccessToken, installViaPortal, resetWorld, sql, tokenCalls } from "../helpers/stack";

beforeEach(resetWorld);
afterAll(closeSql);

const setBehaviour = (patch: Record<string, unknown>) => control("POST", "/idp-behaviour", patch);

describe("token responses without scope or expires_in", () => {
  it("at the callback: the install completes with the consumer's scopes and an assumed hour", async () => {
    await setBehaviour({ omitScope: true, omitExpiresIn: true });
    const before = Date.now();
    const { installRowId, installId } = await installViaPortal(1001);

    const [install] = await sql<{ granted_scopes: string[] }>("SELECT granted_scopes FROM installs WHERE id = $1", [installRowId]);
    const sandboxScopes = (await control<{ installs: { install_id: number; scopes: string[] }[] }>("GET", "/installs")).installs.find(
      (i) => i.install_id === installId,
    )!.scopes;
    expect([...install!.granted_scopes].sort()).toEqual([...new Set([...sandboxScopes, "offline_access"])].sort());
    expect(install!.granted_scopes).toContain("charge-points:read");

    const [grant] = await sql<{ access_token_expires_at: Date; scope: string }>(
      "SELECT access_token_expires_at, scope FROM token_grants WHERE install_row_id = $1",
      [installRowId],
    );
    const lifetime = grant!.access_token_expires_at.getTime() - before;
    expect(lifetime).toBeGreaterThan(3590_000);
    expect(lifetime).toBeLessThanOrEqual(3600_000);
    expect(grant!.scope.split(" ")).toContain("charge-points:read");
  });

  it("at refresh: the new pair is stored, the scopes stay as they were, the hour is assumed", async () => {
    const { installRowId, installId } = await installViaPortal(1001);
    const [before] = await sql<{ scope: string; version: number }>("SELECT scope, version FROM token_grants WHERE install_row_id = $1", [installRowId]);
    await setBehaviour({ omitScope: true, omitExpiresIn: true });
    await expireAccessToken(installRowId, false);
    const sentAfter = Date.now();

    expect(resultOf(await runAppWorker(["dashboard-read", installRowId]))).toEqual({ ok: true });
    expect((await tokenCalls(installId)).refresh_token).toBe(1);
    const [after] = await sql<{ scope: string; version: number; access_token_expires_at: Date; refresh_started_at: Date | null }>(
      "SELECT scope, version, access_token_expires_at, refresh_started_at FROM token_grants WHERE install_row_id = $1",
      [installRowId],
    );
    expect(after).toMatchObject({ scope: before!.scope, version: before!.version + 1, refresh_started_at: null });
    expect(after!.access_token_expires_at.getTime() - sentAfter).toBeGreaterThan(3590_000);
  });
});
