// Staff sign-in under abuse, against the running app: rate limits per address and per account
// (PostgreSQL-backed, with lock-outs), the password-hashing semaphore, and what reaches the log.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { signInStaffWithFetch } from "../helpers/staff-sign-in";
import { closeSql, resetWorld, sql } from "../helpers/stack";

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the integration tests through \`npm test\``);
  return value;
}
const staffEmail = () => required("STAFF_DEV_EMAIL");
const staffPassword = () => required("STAFF_DEV_PASSWORD");

// The app's defaults (lib/env.ts): 20 attempts per address, 10 per account, per 15 minutes.
const PER_ADDRESS = 20;
const PER_ACCOUNT = 10;

/** A client address of its own for each test (TRUSTED_PROXY_COUNT=0 keeps the client's header). */
let addressCounter = 0;
const newAddress = () => `198.51.100.${++addressCounter}`;
const from = (address: string) => ({ headers: { "X-Forwarded-For": address } });

/**
 * As if the window and any lock-out had passed: the counters' end moves into the past. The
 * lock-out history (`<limit>_lockouts:` keys, kept for a day) stays, as it would.
 */
async function letTheWindowPass(): Promise<void> {
  await sql("UPDATE rate_limits SET expire = 0 WHERE key NOT LIKE '%\_lockouts:%'");
}

beforeEach(resetWorld);
afterAll(closeSql);

describe("staff sign-in limits", () => {
  it("after the account's attempts are used up, even the right password is refused with a wait, until the window passes", async () => {
    const address = newAddress();
    for (let i = 0; i < PER_ACCOUNT; i++) {
      expect((await signInStaffWithFetch(staffEmail(), `wrong-${i}`, from(address))).outcome).toBe("CredentialsSignin");
    }
    const refused = await signInStaffWithFetch(staffEmail(), staffPassword(), from(address));
    expect(refused.outcome).toMatch(/^limited\.\d+$/);
    expect(Number(refused.outcome.split(".")[1])).toBeGreaterThanOrEqual(55); // the first lock-out: 60 s
    expect(refused.sessionCookie).toBeUndefined();

    await letTheWindowPass();
    const accepted = await signInStaffWithFetch(staffEmail(), staffPassword(), from(address));
    expect(accepted.outcome).toBe("ok");
    expect(accepted.sessionCookie).toMatch(/next-auth\.session-token=/);
  });

  it("the account's limit holds across addresses, and lock-outs double", async () => {
    for (let i = 0; i < PER_ACCOUNT; i++) {
      expect((await signInStaffWithFetch(staffEmail(), `wrong-${i}`, from(newAddress()))).outcome).toBe("CredentialsSignin");
    }
    const first = await signInStaffWithFetch(staffEmail(), staffPassword(), from(newAddress()));
    expect(first.outcome).toMatch(/^limited\./);
    const firstWait = Number(first.outcome.split(".")[1]);

    // The next window is used up the same way: this lock-out lasts twice as long.
    await letTheWindowPass();
    for (let i = 0; i < PER_ACCOUNT; i++) await signInStaffWithFetch(staffEmail(), `again-${i}`, from(newAddress()));
    const second = await signInStaffWithFetch(staffEmail(), staffPassword(), from(newAddress()));
    expect(second.outcome).toMatch(/^limited\./);
    expect(Number(second.outcome.split(".")[1])).toBeGreaterThan(firstWait * 1.5);
  });

  it("one address trying many accounts (known or not) meets the address's limit; unknown emails are limited like known ones", async () => {
    const address = newAddress();
    for (let i = 0; i < PER_ADDRESS; i++) {
      expect((await signInStaffWithFetch(`nobody-${i}@example.com`, "guess", from(address))).outcome).toBe("CredentialsSignin");
    }
    expect((await signInStaffWithFetch(staffEmail(), staffPassword(), from(address))).outcome).toMatch(/^limited\./);
    // Another address is not affected.
    expect((await signInStaffWithFetch(staffEmail(), staffPassword(), from(newAddress()))).outcome).toBe("ok");

    // An unknown email is counted per account like a known one.
    await letTheWindowPass();
    for (let i = 0; i < PER_ACCOUNT; i++) await signInStaffWithFetch("ghost@example.com", `guess-${i}`, from(newAddress()));
    expect((await signInStaffWithFetch("ghost@example.com", "guess", from(newAddress()))).outcome).toMatch(/^limited\./);
  });

  it("every address of one IPv6 /64 counts against one limit: the 21st attempt from the /64 is refused", async () => {
    // One subscriber's /64 (RFC 6177): a client can pick any of its addresses for each request.
    const inPrefix = (i: number) => `2001:db8:5:7::${(i + 1).toString(16)}`;
    for (let i = 0; i < PER_ADDRESS; i++) {
      expect((await signInStaffWithFetch(`nobody-${i}@example.com`, "guess", from(inPrefix(i)))).outcome).toBe("CredentialsSignin");
    }
    // More addresses of the same /64, one of them written another way, are limited too.
    for (const address of [inPrefix(PER_ADDRESS), inPrefix(PER_ADDRESS + 1), "2001:0DB8:0005:0007:0:0:0:ff"]) {
      expect((await signInStaffWithFetch(staffEmail(), staffPassword(), from(address))).outcome, address).toMatch(/^limited\./);
    }
    // The next /64 is another client.
    expect((await signInStaffWithFetch(staffEmail(), staffPassword(), from("2001:db8:5:8::1"))).outcome).toBe("ok");
    const keys = (await sql<{ key: string }>("SELECT key FROM rate_limits WHERE key LIKE 'sign_in_address:%'")).map((r) => r.key);
    expect(keys).toContain("sign_in_address:2001:db8:5:7::/64");
  });

  it("a burst is answered 'busy, try again' at once beyond the hashing slots, not queued", async () => {
    // Many addresses, many accounts: no rate limit is reached, only the semaphore (2 slots).
    const burst = await Promise.all(
      Array.from({ length: 12 }, (_, i) => signInStaffWithFetch(`burst-${i}@example.com`, "wrong", from(newAddress()))),
    );
    const outcomes = burst.map((r) => r.outcome);
    expect(outcomes.filter((o) => o.startsWith("busy.")).length).toBeGreaterThan(0);
    expect(outcomes.every((o) => o === "CredentialsSignin" || /^busy\.\d+$/.test(o))).toBe(true);
    // Busy answers cost nothing against the limits: only the checked attempts were counted.
    const [row] = await sql<{ counted: number }>(
      "SELECT coalesce(sum(points), 0)::int AS counted FROM rate_limits WHERE key LIKE 'sign_in_account:%'",
    );
    expect(row!.counted).toBe(outcomes.filter((o) => o === "CredentialsSignin").length);
  });

  it("the rate-limit table holds no typed email, only keyed hashes", async () => {
    await signInStaffWithFetch("typed-secret@example.com", "wrong", from(newAddress()));
    const keys = (await sql<{ key: string }>("SELECT key FROM rate_limits")).map((r) => r.key);
    expect(keys.some((k) => k.startsWith("sign_in_account:"))).toBe(true);
    expect(keys.join(" ")).not.toContain("typed-secret");
  });
});

describe("nothing typed into the sign-in form reaches a log", () => {
  it("a password typed into the email field is not in the app's log", async () => {
    const typedPassword = `Tr0ub4dor-${Date.now()}-in-the-wrong-box`;
    const result = await signInStaffWithFetch(typedPassword, "something", from(newAddress()));
    expect(result.outcome).toBe("CredentialsSignin");
    // A real account's wrong password: logged by its (configured) email, never the password.
    await signInStaffWithFetch(staffEmail(), `${typedPassword}-as-password`, from(newAddress()));
    await new Promise((resolve) => setTimeout(resolve, 300)); // pino writes asynchronously

    const log = readFileSync(path.join(required("TEST_LOG_DIR"), "app.log"), "utf8");
    expect(log).toContain("staff sign-in refused");
    expect(log).not.toContain(typedPassword);
    expect(log).not.toContain(staffPassword());
  });
});
