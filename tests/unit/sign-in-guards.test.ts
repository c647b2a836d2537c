// The pieces that guard sign-in, without a server: the no-queue semaphore around password hashing,
// the client address behind proxies, the refusal codes the sign-in form reads, and device cookies.
import { describe, expect, it } from "vitest";
import { describeSignInRefusal, formatSignInRefusal, parseSignInRefusal } from "@/lib/auth/sign-in-refusal";
import { deviceCookieKey, newDeviceId, signDeviceCookie, verifyDeviceCookie } from "@/lib/auth/staff-device";
import { clientAddress } from "@/lib/http/client-address";
import { TrySemaphore } from "@/lib/try-semaphore";

describe("TrySemaphore", () => {
  it("hands out at most `limit` slots and refuses the next at once, without queueing", () => {
    const slots = new TrySemaphore(2);
    const first = slots.tryAcquire();
    const second = slots.tryAcquire();
    expect(first).toBeTypeOf("function");
    expect(second).toBeTypeOf("function");
    expect(slots.tryAcquire()).toBeNull();
    expect(slots.available).toBe(0);
    first!();
    expect(slots.available).toBe(1);
    expect(slots.tryAcquire()).toBeTypeOf("function");
  });

  it("a double release does not raise the limit", () => {
    const slots = new TrySemaphore(1);
    const release = slots.tryAcquire()!;
    release();
    release();
    expect(slots.available).toBe(1);
    slots.tryAcquire();
    expect(slots.tryAcquire()).toBeNull();
  });

  it("run() answers busy at once while the slots are held, and frees the slot even when the work throws", async () => {
    const slots = new TrySemaphore(1);
    let finish!: () => void;
    const held = slots.run(() => new Promise<string>((resolve) => (finish = () => resolve("done"))));
    const started = performance.now();
    expect(await slots.run(async () => "never")).toEqual({ busy: true });
    expect(performance.now() - started).toBeLessThan(50);
    finish();
    expect(await held).toEqual({ busy: false, value: "done" });
    await expect(slots.run(async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(slots.available).toBe(1);
  });

  it("refuses a limit below one", () => {
    expect(() => new TrySemaphore(0)).toThrow();
  });
});

describe("clientAddress", () => {
  const xff = (value: string) => ({ "x-forwarded-for": value });

  it("without trusted proxies: the rightmost entry (what `next start` set, or what the client sent)", () => {
    expect(clientAddress(xff("203.0.113.7"), 0)).toBe("203.0.113.7");
    expect(clientAddress(xff("198.51.100.1, 203.0.113.7"), 0)).toBe("203.0.113.7");
    expect(clientAddress(xff("::ffff:127.0.0.1"), 0)).toBe("127.0.0.1");
  });

  it("behind N proxies: the N-th entry from the right; entries the client wrote further left are ignored", () => {
    expect(clientAddress(xff("6.6.6.6, 203.0.113.7, 10.0.0.2"), 2)).toBe("203.0.113.7");
    expect(clientAddress(xff("203.0.113.7"), 3)).toBe("203.0.113.7");
    expect(clientAddress(new Headers(xff("6.6.6.6, 203.0.113.7")), 1)).toBe("203.0.113.7");
  });

  it("anything that is not an IP address (what a stranger typed) becomes 'unknown'", () => {
    expect(clientAddress(xff("hunter2-password"), 0)).toBe("unknown");
    expect(clientAddress({}, 0)).toBe("unknown");
    expect(clientAddress(undefined, 0)).toBe("unknown");
  });
});

describe("sign-in refusals", () => {
  it("round-trip through next-auth's error value and read as a wait", () => {
    expect(parseSignInRefusal(formatSignInRefusal({ reason: "limited", retryAfterSeconds: 59.2 }))).toEqual({ reason: "limited", retryAfterSeconds: 60 });
    expect(parseSignInRefusal("CredentialsSignin")).toBeNull();
    expect(parseSignInRefusal("limited.0")).toBeNull();
    expect(describeSignInRefusal({ reason: "busy", retryAfterSeconds: 2 })).toBe("The server is busy checking other sign-ins. Try again in 2 s.");
    expect(describeSignInRefusal({ reason: "limited", retryAfterSeconds: 60 })).toBe("Too many sign-in attempts. Try again in 60 s.");
  });
});

describe("device cookies", () => {
  const key = deviceCookieKey("a-test-secret-of-at-least-32-characters!!");
  const now = 1_800_000_000;
  const id = newDeviceId();
  const value = signDeviceCookie(key, "account-a", id, now + 60);

  it("name their device for the account they were issued for, until they expire", () => {
    expect(value).toMatch(/^v1\.[A-Za-z0-9_-]{22}\.[0-9a-z]+\.[A-Za-z0-9_-]{43}$/);
    expect(verifyDeviceCookie(key, value, "account-a", now)).toBe(id);
    expect(verifyDeviceCookie(key, value, "account-a", now + 61)).toBeNull();
  });

  it("are unknown for another account, another key (a rotated secret), or any edit", () => {
    expect(verifyDeviceCookie(key, value, "account-b", now)).toBeNull();
    expect(verifyDeviceCookie(deviceCookieKey("another-secret-of-at-least-32-characters"), value, "account-a", now)).toBeNull();
    const [version, deviceId, expires, mac] = value.split(".") as [string, string, string, string];
    const edits = [
      `${version}.${newDeviceId()}.${expires}.${mac}`,
      `${version}.${deviceId}.${(parseInt(expires, 36) + 3600).toString(36)}.${mac}`,
      `${version}.${deviceId}.${expires}.${mac.slice(0, -1)}${mac.endsWith("A") ? "B" : "A"}`,
      `v2.${deviceId}.${expires}.${mac}`,
      `${value}.extra`,
      "",
      "x".repeat(10_000),
      "v1.....",
    ];
    for (const edit of edits) expect(verifyDeviceCookie(key, edit, "account-a", now)).toBeNull();
  });
});
