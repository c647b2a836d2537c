// A staff sign-in as the console's form does it, with fetch alone: next-auth 4's Credentials POST
// needs its CSRF token and the matching cookie (double-submit), both from GET /api/auth/csrf.
// Used by the integration tests and by `npm run bench` (a burst of wrong passwords).
import { stack } from "./stack";
import { PRODUCT, cookiePattern } from "./product";

export type StaffSignInResult = {
  /** "ok", "CredentialsSignin" (wrong email or password), "limited.N" / "busy.N" (lib/auth/sign-in-refusal.ts), or another next-auth error. */
  outcome: string;
  status: number;
  /** `name=value` of the session cookie, on success. */
  sessionCookie?: string;
  /** `name=value` of the device cookie the app set (on success: lib/auth/staff-device.ts). */
  deviceCookie?: string;
  /** Every Set-Cookie line of the answer, with its attributes. */
  setCookies: string[];
};

function cookiePairs(response: Response): string[] {
  return response.headers.getSetCookie().map((line) => line.split(";")[0]!);
}

/**
 * Signs in with these credentials. `headers` are added to the POST (e.g. an X-Forwarded-For, to
 * play another client address: with TRUSTED_PROXY_COUNT=0, `next start` keeps a client's header).
 * `deviceCookie` (`name=value`, as a previous result's) plays a browser that signed in before.
 */
export async function signInStaffWithFetch(
  email: string,
  password: string,
  options: { appUrl?: string; headers?: Record<string, string>; deviceCookie?: string } = {},
): Promise<StaffSignInResult> {
  const appUrl = options.appUrl ?? stack.appUrl;
  const csrf = await fetch(`${appUrl}/api/auth/csrf`, { headers: options.headers });
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const response = await fetch(`${appUrl}/api/auth/callback/staff`, {
    method: "POST",
    redirect: "manual",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      ...options.headers,
      Cookie: [...cookiePairs(csrf), ...(options.deviceCookie ? [options.deviceCookie] : [])].join("; "),
    },
    // json=true: next-auth answers { url } instead of a redirect, as it does for its own client.
    body: new URLSearchParams({ email, password, csrfToken, callbackUrl: `${appUrl}/admin`, json: "true" }).toString(),
  });
  const sessionCookie = cookiePairs(response).find((pair) => cookiePattern(PRODUCT.cookies.session).test(pair));
  const deviceCookie = cookiePairs(response).find((pair) => cookiePattern(PRODUCT.cookies.staffDevice).test(pair));
  let url: string | undefined;
  if (response.headers.get("content-type")?.includes("json")) url = ((await response.json()) as { url?: string }).url;
  else await response.body?.cancel();
  const error = url ? new URL(url).searchParams.get("error") : null;
  return { outcome: sessionCookie && !error ? "ok" : (error ?? `http_${response.status}`), status: response.status, sessionCookie, deviceCookie, setCookies: response.headers.getSetCookie() };
}

/** next-auth's sign-out, as the Sign out button does it (POST with the CSRF token), for this cookie. */
export async function signOutWithFetch(sessionCookie: string, appUrl = stack.appUrl): Promise<void> {
  const csrf = await fetch(`${appUrl}/api/auth/csrf`, { headers: { Cookie: sessionCookie } });
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const response = await fetch(`${appUrl}/api/auth/signout`, {
    method: "POST",
    redirect: "manual",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: [sessionCookie, ...cookiePairs(csrf)].join("; ") },
    body: new URLSearchParams({ csrfToken, callbackUrl: appUrl, json: "true" }).toString(),
  });
  if (response.status >= 400) throw new Error(`sign-out answered HTTP ${response.status}`);
  await response.body?.cancel();
}
