// Who may talk to the sandbox. It runs on a developer's machine, and its control API (/_sandbox) has
// no authentication (README decision 18): it can reset the state, move the clock, revoke installs
// and re-issue the client secret. Listening on loopback only (listenHost in config.ts) keeps the
// network out; these two checks keep out the developer's own browser when it visits another site:
//
// 1. The Host header (every route): a web page that rebinds its own domain's DNS to 127.0.0.1 can
//    send requests to the sandbox *and read the answers*, as if it were same-origin. The browser
//    still sends that domain in Host, so only loopback names and SANDBOX_URL's host are served.
// 2. The caller (the control API only): any web page can send a "simple" cross-origin POST (a form,
//    or fetch with text/plain) without a CORS preflight. It cannot read the answer, but the action
//    is done. Browsers say where a request comes from: `Origin` on every cross-origin request and
//    every POST, `Sec-Fetch-Site` on every request of a modern browser. A control request is refused
//    when either names another origin. Tools (curl, tests, the app's scripts) send neither, and are
//    served as before. The portal, consent and console pages are not affected: the service's own
//    pages are reached by cross-site navigation by design (the app's reauth_url link, the redirect
//    to the consent page).
import type { MiddlewareHandler } from "hono";
import type { SandboxContext } from "./context.js";
import { isLoopbackHost } from "./config.js";

/** Sec-Fetch-Site values of a request that comes from the sandbox's own pages or from the user (address bar, bookmark). */
const SAME_ORIGIN_FETCH_SITES = new Set(["same-origin", "none"]);

function refuse(reason: "host" | "origin" | "sec-fetch-site", message: string) {
  return Response.json({ error: "forbidden", reason, message }, { status: 403 });
}

/** The hostname of a Host header value (`localhost:4010`, `[::1]:4010`), lower-cased. */
function hostnameOf(hostHeader: string): string | undefined {
  try {
    return new URL(`http://${hostHeader}`).hostname;
  } catch {
    return undefined;
  }
}

/** Check 1, for every route: answer only to this machine's loopback names and the configured public host. */
export function hostGuard(ctx: SandboxContext): MiddlewareHandler {
  return async (c, next) => {
    const host = c.req.header("host");
    if (host !== undefined) {
      const hostname = hostnameOf(host);
      const publicHostname = new URL(ctx.publicUrl()).hostname;
      if (!hostname || !(isLoopbackHost(hostname) || hostname === publicHostname)) {
        ctx.log(`refused a request for host ${JSON.stringify(host)} (DNS rebinding?): only loopback names and ${publicHostname} are served`);
        return refuse("host", `The sandbox answers only to localhost and ${publicHostname}, not to "${host}".`);
      }
    }
    await next();
  };
}

/** Check 2, for /_sandbox: refuse requests a browser made on behalf of another origin. */
export function controlOriginGuard(ctx: SandboxContext): MiddlewareHandler {
  return async (c, next) => {
    const origin = c.req.header("origin");
    if (origin !== undefined) {
      // Same-origin means the sandbox's public origin, or the very origin the request was sent to
      // (e.g. http://127.0.0.1:4010 when SANDBOX_URL says localhost); the Host check ran first.
      const own = new Set([new URL(ctx.publicUrl()).origin, new URL(c.req.url).origin]);
      if (!own.has(origin)) {
        ctx.log(`refused a control API request from origin ${JSON.stringify(origin)}`);
        return refuse("origin", `The control API does not accept requests from other web pages (Origin: ${origin}).`);
      }
    }
    const site = c.req.header("sec-fetch-site");
    if (site !== undefined && !SAME_ORIGIN_FETCH_SITES.has(site)) {
      ctx.log(`refused a control API request with Sec-Fetch-Site ${JSON.stringify(site)}`);
      return refuse("sec-fetch-site", `The control API does not accept requests from other web pages (Sec-Fetch-Site: ${site}).`);
    }
    await next();
  };
}
