// Staff sign-in under abuse, against the running app: rate limits per address and per account
// (PostgreSQL-backed, with lock-outs), device cookies that keep a staff member's own browser out of
// strangers' lock-outs, the password-hashing semaphore, and what reaches the log.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { PRODUCT, cookiePattern } from "../helpers/product";
import { signInStaffWithFetch } from "../helpers/staff-sign-in";
import { closeSql, resetWorld, sql } from "../helpers/stack";
import { scaled } from "../helpers/time-scale";

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the integration tests through \`npm test\``);
  return value;
}
const staffEmail = () => required("STAFF_DEV_EMAIL");
const staffPassword = () => required("STAFF_DEV_PASSWORD");

// The app's defaults (lib/env.ts): 20 attempts per address, 10 per account, 5 per known device, per 15 minutes.
const PER_ADDRESS = 20;
const PER_ACCOUNT = 10;
const PER_DEVICE = 5;

/** A client address of its own for each test (TRUSTED_PROXY_COUNT=0 keeps the client's header). */
let addressCounter = 0;
const newAddress = () => `198.51.100.${++addressCounter}`;
const from = (address: string) => ({ headers: { "X-Forwarded-For": address } });
/** As `from`, from a browser holding this device cookie (`name=value`). */
const fromDevice = (deviceCookie: string | undefined, address = newAddress()) => ({ ...from(address), deviceCookie });

/** Strangers: `count` wrong passwords for this email, each from an address of its own. */
async function burstOfWrongPasswords(email: string, count: number): Promise<string[]> {
  const outcomes: string[] = [];
  for (let i = 0; i < count; i++) outcomes.push((await signInStaffWithFetch(email, `stranger-${i}`, from(newAddress()))).outcome);
  return outcomes;
}

/** The points counted so far under one limit (e.g. `sign_in_account`), over all its keys. */
async function counted(limit: string): Promise<number> {
  const [row] = await sql<{ n: number }>("SELECT coalesce(sum(points), 0)::int AS n FROM rate_limits WHERE key LIKE $1", [`${limit}:%`]);
  return row!.n;
}

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
    expect(accepted.sessionCookie).toMatch(cookiePattern(PRODUCT.cookies.session));
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
  }, scaled(60_000));

  it("a burst of wrong passwords from many addresses locks the account for unknown devices only: the staff member's browser that signed in before still gets in", async () => {
    const before = await signInStaffWithFetch(staffEmail(), staffPassword(), from(newAddress()));
    expect(before.outcome).toBe("ok");

    const burst = await burstOfWrongPasswords(staffEmail(), 3 * PER_ACCOUNT);
    expect(burst.slice(0, PER_ACCOUNT).every((o) => o === "CredentialsSignin")).toBe(true);
    expect(burst.slice(PER_ACCOUNT).every((o) => /^limited\.\d+$/.test(o))).toBe(true);

    // The right password from a browser the app has not seen: refused while the account is locked.
    const unknown = await signInStaffWithFetch(staffEmail(), staffPassword(), from(newAddress()));
    expect(unknown.outcome).toMatch(/^limited\.\d+$/);
    expect(unknown.sessionCookie).toBeUndefined();
    expect(unknown.deviceCookie).toBeUndefined();

    // The staff member's own browser, from yet another address: signed in, and still known.
    const known = await signInStaffWithFetch(staffEmail(), staffPassword(), fromDevice(before.deviceCookie));
    expect(known.outcome).toBe("ok");
    expect(known.sessionCookie).toMatch(cookiePattern(PRODUCT.cookies.session));
    expect(known.deviceCookie?.startsWith(`${PRODUCT.cookies.staffDevice}=v1.`)).toBe(true);

    // Their sign-in did not reopen guessing for strangers: the account is still locked for unknown devices.
    expect((await signInStaffWithFetch(staffEmail(), staffPassword(), from(newAddress()))).outcome).toMatch(/^limited\./);
  });

  it("the device cookie is httpOnly, SameSite=Strict, sent only to the sign-in route, lasts weeks, and holds no email", async () => {
    const { deviceCookie, setCookies } = await signInStaffWithFetch(staffEmail(), staffPassword(), from(newAddress()));
    const line = setCookies.find((l) => l.startsWith(`${PRODUCT.cookies.staffDevice}=`));
    expect(line).toBeDefined();
    expect(line).toMatch(/; HttpOnly/i);
    expect(line).toMatch(/; SameSite=Strict/i);
    expect(line).toMatch(/; Path=\/api\/auth\/callback\/staff(;|$)/);
    expect(Number(/; Max-Age=(\d+)/i.exec(line!)?.[1])).toBeGreaterThanOrEqual(30 * 86_400);
    expect(line).not.toMatch(/; Secure/i); // the test stack's APP_URL is http://localhost
    const value = deviceCookie!.slice(deviceCookie!.indexOf("=") + 1);
    expect(value).toMatch(/^v1\.[A-Za-z0-9_-]{22}\.[0-9a-z]+\.[A-Za-z0-9_-]{43}$/); // an id, an expiry and a MAC
    expect(value).not.toContain(staffEmail().split("@")[0]!);
  });

  it("a known device has a small budget of its own; over it, the device is unknown again and counted against the account", async () => {
    const { deviceCookie } = await signInStaffWithFetch(staffEmail(), staffPassword(), from(newAddress()));
    expect(deviceCookie).toBeDefined();

    // Within its budget, a known device's failures are its own: the account's count does not move.
    for (let i = 0; i < PER_DEVICE; i++) {
      expect((await signInStaffWithFetch(staffEmail(), `mine-${i}`, fromDevice(deviceCookie))).outcome).toBe("CredentialsSignin");
    }
    expect(await counted("sign_in_device")).toBe(PER_DEVICE);
    expect(await counted("sign_in_account")).toBe(0);

    // One more: the device is over its budget, so this attempt is an unknown device's (checked, and
    // counted against the account).
    expect((await signInStaffWithFetch(staffEmail(), "one-too-many", fromDevice(deviceCookie))).outcome).toBe("CredentialsSignin");
    expect(await counted("sign_in_account")).toBe(1);

    // Once strangers lock the account, that device is locked out with the unknown ones, right password or not.
    await burstOfWrongPasswords(staffEmail(), PER_ACCOUNT);
    const refused = await signInStaffWithFetch(staffEmail(), staffPassword(), fromDevice(deviceCookie));
    expect(refused.outcome).toMatch(/^limited\.\d+$/);
    expect(refused.sessionCookie).toBeUndefined();
  });

  it("a known browser is not locked out by wrong passwords from other browsers at its own address (an office behind one NAT)", async () => {
    const office = newAddress();
    const { deviceCookie } = await signInStaffWithFetch(staffEmail(), staffPassword(), from(office));
    // Other browsers at the office use up the address's attempts, on other accounts and on this one.
    for (let i = 0; i <= PER_ADDRESS; i++) await signInStaffWithFetch(i % 2 ? staffEmail() : `colleague-${i}@example.com`, `typo-${i}`, from(office));
    expect((await signInStaffWithFetch(staffEmail(), staffPassword(), from(office))).outcome).toMatch(/^limited\./);

    // The staff member's own browser, at the same address: its attempts are its device's, not the address's.
    const known = await signInStaffWithFetch(staffEmail(), staffPassword(), fromDevice(deviceCookie, office));
    expect(known.outcome).toBe("ok");
  }, scaled(60_000));

  it("a stolen device cookie spends a budget of its own, not the owner's: after the owner signs in again it is an unknown device, and the owner still gets in", async () => {
    const stolen = (await signInStaffWithFetch(staffEmail(), staffPassword(), from(newAddress()))).deviceCookie;
    // The owner signs in again from that browser: it gets a new device cookie, with a new device id.
    const renewed = (await signInStaffWithFetch(staffEmail(), staffPassword(), fromDevice(stolen))).deviceCookie;
    const idOf = (cookie: string | undefined) => cookie?.split("=")[1]?.split(".")[1];
    expect(idOf(renewed)).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(idOf(renewed)).not.toBe(idOf(stolen));

    // The thief guesses with the old cookie from addresses of their own: it is spent, so each guess is a
    // stranger's, counted against the account and locked with the unknown devices after its budget.
    const guesses: string[] = [];
    for (let i = 0; i < PER_DEVICE + PER_ACCOUNT + 3; i++) guesses.push((await signInStaffWithFetch(staffEmail(), `thief-${i}`, fromDevice(stolen))).outcome);
    expect(guesses.filter((o) => o === "CredentialsSignin")).toHaveLength(PER_ACCOUNT);
    expect(guesses.slice(PER_ACCOUNT).every((o) => /^limited\.\d+$/.test(o))).toBe(true);
    expect((await signInStaffWithFetch(staffEmail(), staffPassword(), fromDevice(stolen))).outcome).toMatch(/^limited\./);

    // The owner's browser, with its current cookie: its budget is untouched.
    expect((await signInStaffWithFetch(staffEmail(), staffPassword(), fromDevice(renewed))).outcome).toBe("ok");
  }, scaled(60_000));

  it("a forged, edited or other account's device cookie is an unknown device", async () => {
    const viewer = await signInStaffWithFetch(required("STAFF_VIEWER_DEV_EMAIL"), required("STAFF_VIEWER_DEV_PASSWORD"), from(newAddress()));
    expect(viewer.outcome).toBe("ok");
    const mine = await signInStaffWithFetch(staffEmail(), staffPassword(), from(newAddress()));
    const [name, value] = mine.deviceCookie!.split("=") as [string, string];
    const [version, id, expires, mac] = value.split(".") as [string, string, string, string];
    const flip = (text: string) => `${text[0] === "A" ? "B" : "A"}${text.slice(1)}`;

    await burstOfWrongPasswords(staffEmail(), PER_ACCOUNT);
    const candidates = [
      viewer.deviceCookie!, // another account's genuine cookie
      `${name}=${version}.${flip(id)}.${expires}.${mac}`, // another device id under this MAC
      `${name}=${version}.${id}.${(parseInt(expires, 36) + 86_400 * 365).toString(36)}.${mac}`, // a later expiry
      `${name}=${version}.${id}.${expires}.${flip(mac)}`, // a made-up MAC
      `${name}=v2.${id}.${expires}.${mac}`,
      `${name}=${"%".repeat(300)}`,
      `${name}=`,
    ];
    for (const deviceCookie of candidates) {
      const result = await signInStaffWithFetch(staffEmail(), staffPassword(), fromDevice(deviceCookie));
      expect(result.outcome, deviceCookie).toMatch(/^limited\.\d+$/);
    }
    // The genuine cookie still works (and nothing above answered a 500).
    expect((await signInStaffWithFetch(staffEmail(), staffPassword(), fromDevice(mine.deviceCookie))).outcome).toBe("ok");
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
  }, scaled(60_000));

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
  }, scaled(60_000));

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
    // A known device's sign-in and failure: its device cookie is not logged either.
    const { deviceCookie } = await signInStaffWithFetch(staffEmail(), staffPassword(), from(newAddress()));
    await signInStaffWithFetch(staffEmail(), "wrong", fromDevice(deviceCookie));
    await new Promise((resolve) => setTimeout(resolve, 300)); // pino writes asynchronously

    const log = readFileSync(path.join(required("TEST_LOG_DIR"), "app.log"), "utf8");
    expect(log).toContain("staff sign-in refused");
    expect(log).not.toContain(typedPassword);
    expect(log).not.toContain(staffPassword());
    const [, id, , mac] = deviceCookie!.split("=")[1]!.split(".");
    expect(log).not.toContain(id);
    expect(log).not.toContain(mac);
  });
});
