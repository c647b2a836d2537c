// Staff passwords (lib/auth/password.ts) and the staff sign-in check (lib/auth/staff-accounts.ts).
import { describe, expect, it } from "vitest";
import { DEFAULT_SCRYPT_PARAMS, hashPassword, parsePasswordHash, unmatchableHashLike, verifyPassword } from "@/lib/auth/password";
import { authenticateStaff, parseStaffUsers } from "@/lib/auth/staff-accounts";

// The smallest cost the module accepts keeps these tests fast; the format is the same.
const FAST = { N: 2 ** 14, r: 8, p: 1 };
const password = "correct horse battery staple";

describe("staff password hashes", () => {
  it("round-trips, with the parameters written into the hash", async () => {
    const hash = hashPassword(password, FAST);
    expect(hash).toMatch(/^scrypt\.16384\.8\.1\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    expect(hash).not.toContain(password);
    // Safe in a .env (no `$` expansion) and in STAFF_USERS (no `=` or `,`).
    expect(hash).not.toMatch(/[$=,]/);
    expect(await verifyPassword(password, hash)).toBe(true);
  });

  it("uses the default parameters and a fresh salt each time", async () => {
    const a = hashPassword(password);
    const b = hashPassword(password);
    expect(a.startsWith(`scrypt.${DEFAULT_SCRYPT_PARAMS.N}.${DEFAULT_SCRYPT_PARAMS.r}.${DEFAULT_SCRYPT_PARAMS.p}.`)).toBe(true);
    expect(a).not.toBe(b);
    expect(await verifyPassword(password, a)).toBe(true);
    expect(await verifyPassword(password, b)).toBe(true);
  });

  it("refuses a wrong password, including near misses", async () => {
    const hash = hashPassword(password, FAST);
    for (const wrong of ["", "correct horse battery stapl", `${password} `, password.toUpperCase()]) {
      expect(await verifyPassword(wrong, hash)).toBe(false);
    }
  });

  it("treats canonically equal Unicode the same (NFC)", async () => {
    const hash = hashPassword("caf\u00e9-password", FAST);
    expect(await verifyPassword("cafe\u0301-password", hash)).toBe(true);
  });

  it("never matches a malformed hash, and never throws for one", async () => {
    const good = hashPassword(password, FAST);
    const [, n, r, p, salt, key] = good.split(".") as [string, string, string, string, string, string];
    const malformed = [
      "",
      password,
      `bcrypt.${n}.${r}.${p}.${salt}.${key}`, // another algorithm
      `scrypt.${n}.${r}.${p}.${salt}`, // a part missing
      `scrypt.${n}.${r}.${p}.${salt}.${key}.extra`,
      `scrypt.16383.${r}.${p}.${salt}.${key}`, // N not a power of two
      `scrypt.1024.${r}.${p}.${salt}.${key}`, // too cheap
      `scrypt.1048576.64.${p}.${salt}.${key}`, // 8 GiB of memory per attempt
      `scrypt.${n}.${r}.99.${salt}.${key}`, // p too high
      `scrypt.0x4000.${r}.${p}.${salt}.${key}`,
      `scrypt.${n}.${r}.${p}.${salt}.${key}=`, // not base64url
      `scrypt.${n}.${r}.${p}.c2FsdA.${key}`, // salt too short
      `scrypt.${n}.${r}.${p}.${salt}.${key.slice(0, 20)}`, // key too short
    ];
    for (const hash of malformed) {
      expect(parsePasswordHash(hash), hash).toBeNull();
      await expect(verifyPassword(password, hash), hash).resolves.toBe(false);
    }
  });

  it("refuses to make a hash it would not accept back", () => {
    expect(() => hashPassword(password, { N: 1024, r: 8, p: 1 })).toThrow(/outside the accepted range/);
  });
});

describe("STAFF_USERS", () => {
  it("parses entries, lower-casing the emails", () => {
    const a = hashPassword("first password", FAST);
    const b = hashPassword("second password", FAST);
    const accounts = parseStaffUsers(` Ops@Partner.example=${a} , support@partner.example=${b},`);
    // An entry without a role is a console operator: configurations from before roles keep working.
    expect([...accounts.entries()]).toEqual([
      ["ops@partner.example", { hash: a, role: "operator" }],
      ["support@partner.example", { hash: b, role: "operator" }],
    ]);
    expect(parseStaffUsers("").size).toBe(0);
  });

  it("reads an optional role after the hash: viewer or operator", () => {
    const a = hashPassword("first password", FAST);
    const b = hashPassword("second password", FAST);
    const accounts = parseStaffUsers(`ops@partner.example=${a}=operator, support@partner.example=${b}=Viewer`);
    expect(accounts.get("ops@partner.example")).toEqual({ hash: a, role: "operator" });
    expect(accounts.get("support@partner.example")).toEqual({ hash: b, role: "viewer" });
  });

  it("refuses an unknown role, or more parts, naming the entry and never the hash", () => {
    const hash = hashPassword(password, FAST);
    expect(() => parseStaffUsers(`a@example.com=${hash}=admin`)).toThrow(/entry 1 \(a@example.com\): the role must be viewer or operator/);
    expect(() => parseStaffUsers(`a@example.com=${hash}=viewer=x`)).toThrow(/entry 1 must be/);
    expect(() => parseStaffUsers(`a@example.com=${hash}=`)).toThrow(/the role must be/);
    for (const bad of [`a@example.com=${hash}=admin`, `a@example.com=${hash}=viewer=x`]) {
      expect(() => parseStaffUsers(bad)).toThrow(expect.objectContaining({ message: expect.not.stringContaining(hash.slice(0, 30)) }));
    }
  });

  it("refuses malformed entries without echoing the hash", () => {
    const hash = hashPassword(password, FAST);
    expect(() => parseStaffUsers(`not-an-email=${hash}`)).toThrow(/entry 1 must be/);
    expect(() => parseStaffUsers(hash)).toThrow(/entry 1 must be/);
    expect(() => parseStaffUsers(`a@example.com=${hash},b@example.com=scrypt.bad`)).toThrow(/entry 2 \(b@example.com\)/);
    expect(() => parseStaffUsers(`a@example.com=${hash},A@example.com=${hash}`)).toThrow(/twice/);
    try {
      parseStaffUsers(`a@example.com=${hash.slice(0, -10)}`);
    } catch (error) {
      expect((error as Error).message).not.toContain(hash.slice(0, 30));
    }
  });
});

describe("staff sign-in", () => {
  const hash = hashPassword(password);
  const accounts = parseStaffUsers(`staff@example.com=${hash}`);

  it("accepts the right password, whatever the email's case", async () => {
    expect(await authenticateStaff({ email: " Staff@Example.com ", password }, accounts)).toEqual({ email: "staff@example.com", role: "operator" });
  });

  it("refuses a wrong password and an unknown email alike", async () => {
    expect(await authenticateStaff({ email: "staff@example.com", password: "wrong password" }, accounts)).toBeNull();
    expect(await authenticateStaff({ email: "nobody@example.com", password }, accounts)).toBeNull();
    // Malformed input is just another failed sign-in.
    expect(await authenticateStaff({ email: "staff@example.com" }, accounts)).toBeNull();
    expect(await authenticateStaff(undefined, accounts)).toBeNull();
    expect(await authenticateStaff({ email: "staff@example.com", password: "x".repeat(2000) }, accounts)).toBeNull();
  });

  it("still runs a full verification for an unknown email, with the accounts' own parameters", async () => {
    // The decoy has the configured hash's cost and never matches.
    const decoy = unmatchableHashLike(hash);
    expect(parsePasswordHash(decoy)?.params).toEqual(parsePasswordHash(hash)?.params);
    expect(await verifyPassword(password, decoy)).toBe(false);
    expect(parsePasswordHash(unmatchableHashLike())?.params).toEqual(DEFAULT_SCRYPT_PARAMS);

    // An unknown email takes about as long as a known one with a wrong password. Without the decoy
    // verification it would answer in well under a millisecond instead of one scrypt's time.
    const timed = async (email: string) => {
      const started = performance.now();
      await authenticateStaff({ email, password: "wrong password" }, accounts);
      return performance.now() - started;
    };
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 3; i++) {
      known.push(await timed("staff@example.com"));
      unknown.push(await timed(`nobody${i}@example.com`));
    }
    expect(median(unknown)).toBeGreaterThan(median(known) * 0.5);
  });
});
