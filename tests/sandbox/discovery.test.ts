// Discovery and the seed: what an app reads first, and the data it should end up showing.
import { describe, expect, it } from "vitest";
import { buildSeed } from "../../sandbox/seed.js";
import { control, setUpTestSandbox } from "./helpers.js";

const env = setUpTestSandbox();

describe("discovery", () => {
  it("advertises the issuer and Hydra-style endpoints under /idp", async () => {
    const response = await fetch(`${env.url}/idp/.well-known/openid-configuration`);
    expect(response.status).toBe(200);
    const doc = (await response.json()) as Record<string, unknown>;
    const issuer = `${env.url}/idp`;
    expect(doc.issuer).toBe(issuer);
    expect(doc.authorization_endpoint).toBe(`${issuer}/oauth2/auth`);
    expect(doc.token_endpoint).toBe(`${issuer}/oauth2/token`);
    expect(doc.revocation_endpoint).toBe(`${issuer}/oauth2/revoke`);
    expect(doc.userinfo_endpoint).toBe(`${issuer}/userinfo`);
    expect(doc.response_types_supported).toEqual(["code"]);
    expect(doc.grant_types_supported).toEqual(["authorization_code", "refresh_token"]);
    expect(doc.token_endpoint_auth_methods_supported).toContain("client_secret_post");
    expect(doc.scopes_supported).toContain("offline_access");
    expect(doc).not.toHaveProperty("introspection_endpoint");
  });

  it("serves the JWKS the document points to", async () => {
    const doc = (await (await fetch(`${env.url}/idp/.well-known/openid-configuration`)).json()) as { jwks_uri: string };
    const jwks = await fetch(doc.jwks_uri);
    expect(jwks.status).toBe(200);
    expect(await jwks.json()).toEqual({ keys: [] });
  });

  it("answers health with the issuer and API base", async () => {
    const health = await control<{ ok: boolean; issuer: string; apiBase: string }>(env, "GET", "/health");
    expect(health).toMatchObject({ ok: true, issuer: `${env.url}/idp`, apiBase: `${env.url}/api/v1` });
  });
});

describe("seed data", () => {
  it("is deterministic: two builds are identical", () => {
    expect(JSON.stringify(buildSeed())).toBe(JSON.stringify(buildSeed()));
  });

  it("has three operators with different charge point counts so pagination matters, then the large one", async () => {
    const { operators } = await control<{ operators: { id: number; name: string; slug: string; chargePointCount: number }[] }>(env, "GET", "/operators");
    expect(operators.map((o) => o.id)).toEqual([1001, 1002, 1003, 2001]);
    expect(operators.map((o) => o.chargePointCount)).toEqual([23, 7, 41, 500]);
    expect(operators[0]).toMatchObject({ name: "Northwind Charging", slug: "northwind-charging" });
  });

  it("gives every charge point the documented fields", async () => {
    const { data } = await control<{ data: Record<string, unknown>[] }>(env, "GET", "/operators/1002/charge-points");
    expect(data).toHaveLength(7);
    for (const cp of data) {
      expect(cp).toEqual(
        expect.objectContaining({
          id: expect.any(Number),
          teamId: expect.any(Number),
          serialNumber: expect.any(String),
          evseId: expect.stringMatching(/^NO\*FJL\*E\d+$/),
          type: expect.stringMatching(/^(ac|dc)$/),
          maxKw: expect.any(Number),
          connectors: expect.any(Array),
          location: expect.objectContaining({ address: expect.objectContaining({ city: expect.stringMatching(/^(Oslo|Bergen)$/) }) }),
        }),
      );
    }
  });
});
