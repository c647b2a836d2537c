// The redirect_uri is not an amplifier: malformed codes cost nothing, and well-formed ones are
// limited per client address before any claim row or token-endpoint call.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { approveInPortal, closeSql, resetWorld, sql, stack, tokenCalls } from "../helpers/stack";

// The app's default (lib/env.ts): 20 callbacks with a well-formed code per address per minute.
const PER_MINUTE = 20;

let addressCounter = 0;
const newAddress = () => `203.0.113.${++addressCounter}`;

async function visit(query: string, address: string): Promise<Response> {
  return fetch(`${stack.appUrl}/oauth/callback${query}`, { redirect: "manual", headers: { "X-Forwarded-For": address } });
}

const claimRows = async () => (await sql<{ n: number }>("SELECT count(*)::int AS n FROM authorization_code_claims"))[0]!.n;
const forgedCode = (i: number) => `volt_ac_forged${String(i).padStart(6, "0")}${"Z".repeat(30)}`;
/** A made-up but well-formed code, naming the right issuer (RFC 9207), so it reaches the identity provider. */
const forgedQuery = (i: number) => `?${new URLSearchParams({ code: forgedCode(i), iss: process.env.OAUTH_ISSUER! })}`;

beforeEach(resetWorld);
afterAll(closeSql);

describe("malformed codes", () => {
  it.each([
    ["too short to be a code", "?code=volt_ac_abc"],
    ["non-ASCII", `?code=${encodeURIComponent("volt_ac_" + "ü".repeat(30))}`],
    ["a control character", `?code=${encodeURIComponent("volt_ac_" + "a".repeat(30) + "\u0000")}`],
    ["too long", `?code=${"a".repeat(2049)}`],
  ])("a code %s gets the failure page with no claim row and no token call", async (_name, query) => {
    const claimsBefore = await claimRows(); // resetWorld keeps earlier tests' claims
    const response = await visit(query, newAddress());
    expect(response.status).toBe(303);
    expect(new URL(response.headers.get("location")!).searchParams.get("reason")).toBe("bad_request");
    expect((await tokenCalls()).events).toHaveLength(0);
    expect(await claimRows()).toBe(claimsBefore);
  });

  it("many malformed codes from one address are never rate-limited (they cost nothing)", async () => {
    const address = newAddress();
    for (let i = 0; i < PER_MINUTE + 5; i++) expect((await visit(`?code=x${i}`, address)).status).toBe(303);
    expect((await tokenCalls()).events).toHaveLength(0);
  });
});

describe("the per-address limit", () => {
  it("over the limit: 429 with Retry-After, no token call and no claim row; other addresses unaffected", async () => {
    const address = newAddress();
    for (let i = 0; i < PER_MINUTE; i++) {
      const response = await visit(forgedQuery(i), address);
      expect(response.status).toBe(303); // refused by the identity provider: a failure page
    }
    const callsBefore = (await tokenCalls()).events.length;
    const claimsBefore = await claimRows();
    expect(callsBefore).toBe(PER_MINUTE);

    const limited = await visit(forgedQuery(999), address);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.headers.get("cache-control")).toBe("no-store");
    expect(await limited.text()).toContain("Too many connection attempts");
    expect((await tokenCalls()).events).toHaveLength(callsBefore);
    expect(await claimRows()).toBe(claimsBefore);

    // A real operator elsewhere still connects.
    const callback = await approveInPortal(1001);
    const response = await fetch(callback, { redirect: "manual", headers: { "X-Forwarded-For": newAddress() } });
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe(`${stack.appUrl}/dashboard`);
  });

  it("every address of one IPv6 /64 counts against one limit: the 21st callback from the /64 gets 429", async () => {
    // One subscriber's /64 (RFC 6177): a client can pick any of its addresses for each request.
    const inPrefix = (i: number) => `2001:db8:c:7::${(i + 1).toString(16)}`;
    for (let i = 0; i < PER_MINUTE; i++) expect((await visit(forgedQuery(i), inPrefix(i))).status).toBe(303);
    const callsBefore = (await tokenCalls()).events.length;
    for (let i = PER_MINUTE; i < PER_MINUTE + 5; i++) expect((await visit(forgedQuery(i), inPrefix(i))).status).toBe(429);
    expect((await visit(forgedQuery(99), "2001:0DB8:000C:0007:0:0:0:1")).status).toBe(429);
    expect((await tokenCalls()).events).toHaveLength(callsBefore);
    // The next /64 is another client.
    expect((await visit(forgedQuery(100), "2001:db8:c:8::1")).status).toBe(303);
  });

  it("a real code refused by the limit is not spent: it works from the same address once the window passes", async () => {
    const address = newAddress();
    for (let i = 0; i < PER_MINUTE; i++) await visit(forgedQuery(i), address);
    const callback = await approveInPortal(1001);
    const query = callback.search;
    expect((await visit(query, address)).status).toBe(429);

    await sql("UPDATE rate_limits SET expire = 0"); // as if the minute had passed
    const response = await visit(query, address);
    expect(response.headers.get("location")).toBe(`${stack.appUrl}/dashboard`);
  });
});
