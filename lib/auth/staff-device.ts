// Device cookies for the staff sign-in (OWASP, "Slow Down Online Guessing Attacks with Device
// Cookies"; docs/spec-gaps.md A105).
//
// The per-account limit stops a guesser who spreads over many addresses, but it also lets anyone
// who knows a staff member's email keep that person out: a dozen wrong passwords an hour lock the
// account, and the right password is refused too. So a browser that has signed in to an account
// before gets a device cookie bound to that account, and its attempts are counted in the device's
// own small budget instead of the address's and the account's (lib/auth/staff-sign-in.ts).
// Strangers' failures, at the office's address or anywhere, lock out unknown devices only; the staff
// member's usual browser still gets in. Each successful sign-in replaces the cookie with one of a new
// device id and retires the one presented (in `rate_limits`, for the cookie's lifetime), so a copy
// taken before is worth nothing once its owner has signed in again.
//
// The cookie is `v1.<device id>.<expiry>.<MAC>`: a random id (128 bits), when it stops being
// valid (seconds since the epoch, base 36), and an HMAC-SHA-256 over the version, the account, the
// id and the expiry. It holds no secret and not the email: the account is bound by the MAC, over
// the same keyed hash of the email that names the account in the rate-limit table. A cookie
// copied from another account, edited, expired or signed with another key is simply not valid,
// and its browser is an unknown device.
//
// The key is derived from NEXTAUTH_SECRET with HKDF (RFC 5869) rather than being a new setting:
// partners already generate, store and rotate that secret, and rotating it already signs every
// staff member out. HKDF's `info` label gives these MACs a key of their own, so a device-cookie
// MAC can never be valid as any other MAC the app makes with that secret (the account key, the
// circuit's fingerprint), nor the reverse. Rotating NEXTAUTH_SECRET makes every device cookie
// invalid: those browsers are unknown devices until their next successful sign-in, which issues
// a new cookie. Nothing fails; during an attack at that moment they are locked out like any new
// browser (docs/security.md, "Known limits"). The `v1` prefix lets a later format coexist.
import "server-only";
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import { cookies } from "next/headers";
import { PRODUCT } from "@/lib/config/product";
import { env } from "@/lib/env";

/** A browser stays known this long after its last successful sign-in (OWASP suggests weeks to months). */
export const DEVICE_COOKIE_MAX_AGE_SECONDS = 60 * 24 * 3600;

/**
 * The only path the cookie is sent to: next-auth's callback for the "staff" Credentials provider
 * (app/api/auth/[...nextauth]/route.ts, lib/auth/options.ts), where the sign-in form posts. No
 * page, API route or script of the app ever sees it.
 */
export const DEVICE_COOKIE_PATH = "/api/auth/callback/staff";

const VERSION = "v1";
const DEVICE_ID_BYTES = 16;
// A fixed label of the key derivation, not the product's name: `npm run rename` leaves it as it is.
const HKDF_INFO = "partner-app staff sign-in device cookie v1";

export type DeviceCookie = {
  name: string;
  value: string;
  options: { httpOnly: true; secure: boolean; sameSite: "strict"; path: string; maxAge: number };
};

function secureCookies(): boolean {
  return new URL(env().APP_URL).protocol === "https:";
}

/** `__Secure-` on https (not `__Host-`: that prefix requires the path `/`). */
export function deviceCookieName(secure = secureCookies()): string {
  return `${secure ? "__Secure-" : ""}${PRODUCT.cookies.staffDevice}`;
}

/** The MAC key, from the app's secret (see the comment at the top for why HKDF). */
export function deviceCookieKey(appSecret: string): Buffer {
  return Buffer.from(hkdfSync("sha256", appSecret, Buffer.alloc(0), HKDF_INFO, 32));
}

function mac(key: Buffer, account: string, deviceId: string, expires: string): string {
  return createHmac("sha256", key).update(`${VERSION}\n${account}\n${deviceId}\n${expires}`).digest("base64url");
}

export function newDeviceId(): string {
  return randomBytes(DEVICE_ID_BYTES).toString("base64url");
}

/** A cookie value for this device and account, valid until `expiresAt` (seconds since the epoch). */
export function signDeviceCookie(key: Buffer, account: string, deviceId: string, expiresAt: number): string {
  const expires = Math.floor(expiresAt).toString(36);
  return `${VERSION}.${deviceId}.${expires}.${mac(key, account, deviceId, expires)}`;
}

/**
 * The device id when `value` is a valid, unexpired device cookie for this account, else null.
 * Whatever a stranger sends costs one HMAC and never throws.
 */
export function verifyDeviceCookie(key: Buffer, value: string | undefined, account: string, now = Date.now() / 1000): string | null {
  if (!value || value.length > 200) return null;
  const parts = value.split(".");
  if (parts.length !== 4 || parts[0] !== VERSION) return null;
  const [, deviceId, expires, presented] = parts as [string, string, string, string];
  if (!/^[A-Za-z0-9_-]{22}$/.test(deviceId) || !/^[0-9a-z]{1,10}$/.test(expires) || !/^[A-Za-z0-9_-]{43}$/.test(presented)) return null;
  const expected = Buffer.from(mac(key, account, deviceId, expires));
  if (!timingSafeEqual(expected, Buffer.from(presented))) return null;
  return parseInt(expires, 36) > now ? deviceId : null;
}

type HeaderSource = Record<string, string | string[] | undefined> | undefined;

/** The value of this cookie in a request's Cookie header, if present once or more (the first). */
function cookieFromHeaders(headers: HeaderSource, name: string): string | undefined {
  const raw = headers?.cookie ?? headers?.Cookie;
  const header = Array.isArray(raw) ? raw.join("; ") : raw;
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The id of the device this request comes from, when it holds a valid device cookie for `account`. */
export function knownDevice(headers: HeaderSource, account: string): string | null {
  return verifyDeviceCookie(deviceCookieKey(env().NEXTAUTH_SECRET), cookieFromHeaders(headers, deviceCookieName()), account);
}

/** The cookie that makes this browser a known device of `account` for the next DEVICE_COOKIE_MAX_AGE_SECONDS. */
export function deviceCookieFor(account: string, deviceId: string): DeviceCookie {
  const secure = secureCookies();
  return {
    name: deviceCookieName(secure),
    value: signDeviceCookie(deviceCookieKey(env().NEXTAUTH_SECRET), account, deviceId, Date.now() / 1000 + DEVICE_COOKIE_MAX_AGE_SECONDS),
    // Strict: the cookie is only needed by the app's own form posting to its own origin.
    options: { httpOnly: true, secure, sameSite: "strict", path: DEVICE_COOKIE_PATH, maxAge: DEVICE_COOKIE_MAX_AGE_SECONDS },
  };
}

/**
 * Sets the cookie on the response of the request under way. Called from next-auth's `authorize`,
 * which runs inside the /api/auth route handler: Next.js adds cookies set there to the response
 * that next-auth returns.
 */
export async function rememberDevice(cookie: DeviceCookie): Promise<void> {
  (await cookies()).set(cookie.name, cookie.value, cookie.options);
}
