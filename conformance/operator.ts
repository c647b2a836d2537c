// The operator: a browser without scripts, as far as a conformance run needs one. It walks the service's portal and
// consent page, visits the app's redirect_uri, keeps the app's cookies, loads the app's page, and follows the way the
// app shows to reauth_url (a link, or a plain HTML form). Every app page it sees is kept, so the run can look for an
// authorization URL the app built (contract §1.3).
import type { SandboxClient } from "./sandbox";

export interface PageAnswer {
  status: number;
  html: string;
  location: string | null;
  ms: number;
}

function locationOf(response: Response, base: string): string {
  const location = response.headers.get("location");
  if (!location) throw new Error(`expected a redirect from ${base}, got HTTP ${response.status}`);
  return new URL(location, base).toString();
}

const form = (fields: Record<string, string>) => ({
  method: "POST",
  headers: { "Content-Type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(fields).toString(),
  redirect: "manual" as const,
});

export class Operator {
  /** Cookies per origin: the app's session, and the sandbox's (the portal's operator cookie). */
  private readonly jar = new Map<string, Map<string, string>>();

  constructor(
    readonly operatorId: number,
    private readonly sandbox: SandboxClient,
    /** Where every page of the app this operator loads is kept (the run's, for the whole-run checks). */
    private readonly seen: { url: string; html: string }[] = [],
  ) {}

  private cookieHeader(url: string): Record<string, string> {
    const cookies = this.jar.get(new URL(url).origin);
    return cookies?.size ? { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join("; ") } : {};
  }

  private keepCookies(url: string, response: Response): void {
    const origin = new URL(url).origin;
    const cookies = this.jar.get(origin) ?? new Map<string, string>();
    for (const line of response.headers.getSetCookie()) {
      const [pair = "", ...attributes] = line.split(";");
      const eq = pair.indexOf("=");
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || (/^\s*expires=/i.test(a) && Date.parse(a.split("=")[1] ?? "") < Date.now()));
      if (expired || value === "") cookies.delete(name);
      else cookies.set(name, value);
    }
    this.jar.set(origin, cookies);
  }

  /**
   * Each operator is a person at their own browser, so each has an address of their own (TEST-NET-2, RFC 5737): a run
   * installs twenty-odd times in a minute, which an app's per-address limit on its redirect_uri would otherwise refuse.
   * An app behind a trusted proxy ignores what the client writes there (docs/conformance.md).
   */
  private get address(): string {
    return `198.51.100.${(this.operatorId % 250) + 1}`;
  }

  /** One request with this operator's cookies; no redirect followed. */
  async request(url: string, init: RequestInit = {}): Promise<PageAnswer> {
    const started = performance.now();
    const toApp = !url.startsWith(this.sandbox.url);
    const response = await fetch(url, {
      ...init,
      redirect: "manual",
      headers: { ...this.cookieHeader(url), ...(toApp ? { "X-Forwarded-For": this.address } : {}), ...(init.headers as Record<string, string> | undefined) },
    });
    this.keepCookies(url, response);
    const html = await response.text();
    const location = response.headers.get("location");
    const answer = { status: response.status, html, location: location ? new URL(location, url).toString() : null, ms: performance.now() - started };
    if (toApp) this.seen.push({ url, html });
    return answer;
  }

  /** Loads a page and follows redirects (at most 5), as a browser does. */
  async load(url: string, init: RequestInit = {}): Promise<PageAnswer & { url: string }> {
    let current = url;
    let answer = await this.request(current, init);
    for (let hops = 0; hops < 5 && answer.location && answer.status >= 300 && answer.status < 400; hops++) {
      current = answer.location;
      answer = await this.request(current);
    }
    return { ...answer, url: current };
  }

  /**
   * The service's side of an install: portal → Connect → the identity provider → consent → the decision. Returns the
   * app's redirect_uri as the identity provider sent the browser to it, not yet visited.
   */
  async consent(decision: "approve" | "deny"): Promise<URL> {
    const sandbox = this.sandbox.url;
    const connect = await fetch(`${sandbox}/portal/operators/${this.operatorId}/connect`, form({}));
    const authorize = await fetch(locationOf(connect, sandbox), { redirect: "manual" });
    const consentUrl = locationOf(authorize, sandbox);
    const page = await (await fetch(consentUrl)).text();
    const challenge = /name="consent_challenge" value="([^"]+)"/.exec(page)?.[1];
    if (!challenge) throw new Error(`the consent page for operator ${this.operatorId} has no consent_challenge`);
    return new URL(locationOf(await fetch(`${sandbox}/idp/consent`, form({ consent_challenge: challenge, decision })), sandbox));
  }

  /**
   * Follows the way the app's page shows to `target` (reauth_url), as an operator without scripts would: a link
   * straight to it, or a form whose submission the app answers with a redirect to it. Forms that sign out are left
   * alone. Returns how it got there, or null when nothing on the page leads there.
   */
  async followTo(target: string, page: { url: string; html: string }): Promise<string | null> {
    const decode = (value: string) => value.replaceAll("&amp;", "&");
    for (const match of page.html.matchAll(/<a\b[^>]*\bhref="([^"]+)"/gi)) {
      const href = new URL(decode(match[1]!), page.url).toString();
      if (href === target) return "a link to reauth_url";
    }
    for (const match of page.html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
      const [, attributes = "", inner = ""] = match;
      if (/sign.?out|log.?out/i.test(attributes + inner)) continue;
      const method = (/\bmethod="([^"]*)"/i.exec(attributes)?.[1] ?? "GET").toUpperCase();
      const action = new URL(decode(/\baction="([^"]*)"/i.exec(attributes)?.[1] ?? ""), page.url).toString();
      const fields = new FormData();
      for (const input of inner.matchAll(/<input\b([^>]*)>/gi)) {
        const name = /\bname="([^"]*)"/i.exec(input[1]!)?.[1];
        if (name) fields.append(decode(name), decode(/\bvalue="([^"]*)"/i.exec(input[1]!)?.[1] ?? ""));
      }
      const multipart = /multipart\/form-data/i.test(attributes);
      const answer =
        method === "GET"
          ? await this.request(`${action.split("?")[0]}?${new URLSearchParams([...fields].map(([k, v]) => [k, String(v)]))}`)
          : // A browser sends its page's Origin with every POST; an app's CSRF defence may insist on it.
            await this.request(
              action,
              multipart
                ? { method: "POST", headers: { Origin: new URL(page.url).origin }, body: fields }
                : {
                    method: "POST",
                    headers: { Origin: new URL(page.url).origin, "Content-Type": "application/x-www-form-urlencoded" },
                    body: new URLSearchParams([...fields].map(([k, v]) => [k, String(v)])).toString(),
                  },
            );
      if (answer.location === target) return `a form (${method} ${new URL(action).pathname}) the app answers with a redirect to reauth_url`;
    }
    return null;
  }

  /** The operator approves at reauth_url (the service's page), then lands where the service sends them. */
  async approveReauthorization(reauthUrl: string): Promise<PageAnswer & { url: string }> {
    await fetch(reauthUrl);
    const answer = await fetch(reauthUrl, form({ decision: "approve" }));
    const back = answer.headers.get("location");
    if (answer.status !== 303 || !back) throw new Error(`approving at reauth_url answered ${answer.status}`);
    return this.load(new URL(back, reauthUrl).toString());
  }
}
