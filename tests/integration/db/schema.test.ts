// What the database itself guarantees, beyond what Prisma's schema can express.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migratedScratchDatabase, type ScratchDatabase } from "../../helpers/database";

let database: ScratchDatabase;
let client: pg.Client;

beforeAll(async () => {
  database = await migratedScratchDatabase();
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
});

afterAll(async () => {
  await client?.end();
  await database?.drop();
});

type Status = "ACTIVE" | "NEEDS_REAUTH" | "REINSTALL_NEEDED" | "REVOKED";

// Each test uses its own client_id, so tests never collide on the one-live-install rule.
let appCounter = 0;
const newClientId = () => `client-${++appCounter}`;

async function insertInstall(clientId: string, operatorId: string, status: Status): Promise<string> {
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO installs (id, client_id, operator_id, status, granted_scopes, updated_at)
     VALUES (gen_random_uuid(), $1, $2, $3, ARRAY['sessions:read'], now()) RETURNING id`,
    [clientId, operatorId, status],
  );
  return rows[0]!.id;
}

/** The Postgres error code (and constraint) the statement failed with. */
async function failureOf(statement: Promise<unknown>): Promise<{ code?: string; constraint?: string }> {
  try {
    await statement;
  } catch (error) {
    if (error instanceof pg.DatabaseError) return { code: error.code, constraint: error.constraint };
    throw error;
  }
  throw new Error("expected the statement to fail, but it succeeded");
}

describe("one live install per app and operator (contract §2)", () => {
  it("refuses a second live install for the same client_id and operator", async () => {
    const clientId = newClientId();
    await insertInstall(clientId, "op-1", "ACTIVE");

    for (const status of ["ACTIVE", "NEEDS_REAUTH", "REINSTALL_NEEDED"] as const) {
      expect(await failureOf(insertInstall(clientId, "op-1", status))).toEqual({
        code: "23505", // unique_violation
        constraint: "installs_one_live_per_operator",
      });
    }
  });

  it("lets another operator, or another app, have its own live install", async () => {
    const clientId = newClientId();
    await insertInstall(clientId, "op-1", "ACTIVE");
    await insertInstall(clientId, "op-2", "ACTIVE");
    await insertInstall(newClientId(), "op-1", "ACTIVE");

    const { rows } = await client.query<{ count: string }>(
      "SELECT count(*) FROM installs WHERE client_id = $1 AND status = 'ACTIVE'",
      [clientId],
    );
    expect(Number(rows[0]!.count)).toBe(2);
  });

  it("keeps any number of revoked installs as history, next to the live one", async () => {
    const clientId = newClientId();
    await insertInstall(clientId, "op-1", "REVOKED");
    await insertInstall(clientId, "op-1", "REVOKED");
    await insertInstall(clientId, "op-1", "ACTIVE");

    const { rows } = await client.query<{ status: Status; count: string }>(
      "SELECT status, count(*) FROM installs WHERE client_id = $1 GROUP BY status ORDER BY status",
      [clientId],
    );
    expect(rows.map((row) => [row.status, Number(row.count)])).toEqual([
      ["ACTIVE", 1],
      ["REVOKED", 2],
    ]);
  });

  it("allows a re-install once the previous install is revoked", async () => {
    const clientId = newClientId();
    const first = await insertInstall(clientId, "op-1", "ACTIVE");
    expect((await failureOf(insertInstall(clientId, "op-1", "ACTIVE"))).code).toBe("23505");

    await client.query("UPDATE installs SET status = 'REVOKED', revoked_at = now() WHERE id = $1", [first]);
    const second = await insertInstall(clientId, "op-1", "ACTIVE");

    expect(second).not.toBe(first);
    // Un-revoking the old row would make two live installs again.
    expect(
      await failureOf(client.query("UPDATE installs SET status = 'ACTIVE' WHERE id = $1", [first])),
    ).toEqual({ code: "23505", constraint: "installs_one_live_per_operator" });
  });
});

describe("token grants and events belong to their install", () => {
  async function insertGrant(installRowId: string) {
    await client.query(
      `INSERT INTO token_grants (id, install_row_id, access_token_encrypted, access_token_expires_at, scope, updated_at)
       VALUES (gen_random_uuid(), $1, 'ciphertext', now() + interval '1 hour', 'sessions:read', now())`,
      [installRowId],
    );
  }

  it("deletes the token grant and the events with the install (ON DELETE CASCADE)", async () => {
    const install = await insertInstall(newClientId(), "op-1", "ACTIVE");
    await insertGrant(install);
    await client.query(
      "INSERT INTO install_events (id, install_row_id, to_status, cause) VALUES (gen_random_uuid(), $1, 'ACTIVE', 'callback')",
      [install],
    );
    const count = async (table: "token_grants" | "install_events") =>
      Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE install_row_id = $1`, [install])).rows[0]!.n);
    expect([await count("token_grants"), await count("install_events")]).toEqual([1, 1]);

    await client.query("DELETE FROM installs WHERE id = $1", [install]);

    expect([await count("token_grants"), await count("install_events")]).toEqual([0, 0]);
  });

  it("holds at most one token grant per install", async () => {
    const install = await insertInstall(newClientId(), "op-1", "ACTIVE");
    await insertGrant(install);

    expect(await failureOf(insertGrant(install))).toEqual({
      code: "23505",
      constraint: "token_grants_install_row_id_key",
    });
  });
});
