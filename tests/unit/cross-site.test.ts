// lib/http/cross-site.ts: which POSTs to a page are refused as cross-site (issue 14, CSRF).
import { describe, expect, it } from "vitest";
import { crossSiteRefusal, isServerActionOutsidePages } from "@/lib/http/cross-site";

const APP = "https://partner.example.com";
const headers = (values: Record<string, string>) => new Headers(values);

describe("crossSiteRefusal", () => {
  it("lets the app's own pages post: same origin, or the person's own navigation", () => {
    expect(crossSiteRefusal("POST", headers({ Origin: APP, "Sec-Fetch-Site": "same-origin" }), APP)).toBeNull();
    expect(crossSiteRefusal("POST", headers({ "Sec-Fetch-Site": "none" }), APP)).toBeNull();
    expect(crossSiteRefusal("POST", headers({ Origin: APP }), APP)).toBeNull();
  });

  it("refuses another site, a sibling subdomain and an opaque origin", () => {
    expect(crossSiteRefusal("POST", headers({ Origin: "https://evil.example", "Sec-Fetch-Site": "cross-site" }), APP)).toEqual({ reason: "sec-fetch-site", value: "cross-site" });
    expect(crossSiteRefusal("POST", headers({ Origin: "https://other.example.com", "Sec-Fetch-Site": "same-site" }), APP)).toEqual({ reason: "sec-fetch-site", value: "same-site" });
    expect(crossSiteRefusal("POST", headers({ Origin: "https://evil.example" }), APP)).toEqual({ reason: "origin", value: "https://evil.example" });
    expect(crossSiteRefusal("POST", headers({ Origin: "null" }), APP)).toEqual({ reason: "origin", value: "null" });
    // The same host over http is another origin.
    expect(crossSiteRefusal("POST", headers({ Origin: "http://partner.example.com" }), APP)?.reason).toBe("origin");
    expect(crossSiteRefusal("delete", headers({ Origin: "https://evil.example" }), APP)?.reason).toBe("origin");
  });

  it("leaves reads alone, and requests from no browser (neither header) to the action's own checks", () => {
    expect(crossSiteRefusal("GET", headers({ Origin: "https://evil.example", "Sec-Fetch-Site": "cross-site" }), APP)).toBeNull();
    expect(crossSiteRefusal("POST", headers({}), APP)).toBeNull();
  });

  it("never echoes more than a short piece of what was sent", () => {
    const refusal = crossSiteRefusal("POST", headers({ Origin: `https://${"a".repeat(500)}.example` }), APP);
    expect(refusal?.value.length).toBe(100);
  });
});

describe("isServerActionOutsidePages", () => {
  const action = headers({ "Next-Action": "7f3a9c" });

  it("is true for a Next-Action header on an API route, a build file or the favicon", () => {
    for (const path of ["/api", "/api/webhooks", "/api/auth/session", "/_next/static/chunks/x.js", "/_next/image", "/favicon.ico"]) {
      expect(isServerActionOutsidePages(path, "POST", action), path).toBe(true);
    }
  });

  it("is false on pages, where server actions live, and without the header", () => {
    for (const path of ["/", "/admin", "/admin/installs/1", "/dashboard", "/oauth/continue", "/apiary", "/favicon.ico.html"]) {
      expect(isServerActionOutsidePages(path, "POST", action), path).toBe(false);
    }
    expect(isServerActionOutsidePages("/api/webhooks", "POST", headers({}))).toBe(false);
  });

  it("counts a form's multipart POST as a server action under /_next and at /favicon.ico, but not on API routes, which take forms of their own", () => {
    const form = headers({ "Content-Type": "multipart/form-data; boundary=x" });
    expect(isServerActionOutsidePages("/_next/static/x", "POST", form)).toBe(true);
    expect(isServerActionOutsidePages("/favicon.ico", "POST", form)).toBe(true);
    expect(isServerActionOutsidePages("/_next/static/x", "GET", form)).toBe(false);
    expect(isServerActionOutsidePages("/api/webhooks", "POST", form)).toBe(false);
  });
});
