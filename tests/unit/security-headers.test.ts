// The page security headers (lib/http/security-headers.ts), built from their options: what the
// Content-Security-Policy allows, and HSTS only for an app served over https.
import { describe, expect, it } from "vitest";
import { contentSecurityPolicy, createNonce, securityHeaders, type SecurityHeaderOptions } from "@/lib/http/security-headers";

const base: SecurityHeaderOptions = {
  nonce: "bm9uY2Utbm9uY2Utbm9uY2U=",
  development: false,
  appUrl: "https://partner.example.com",
  formActionOrigins: ["https://portal.example-service.com"],
  referrerPolicy: "strict-origin-when-cross-origin",
};

/** The policy as directive → sources. */
function directives(policy: string): Map<string, string[]> {
  return new Map(
    policy.split(";").map((part) => {
      const [name, ...sources] = part.trim().split(/\s+/);
      return [name!, sources];
    }),
  );
}

describe("the Content-Security-Policy", () => {
  it("runs only the scripts that carry this response's nonce (and what they load), and no eval in production", () => {
    const csp = directives(contentSecurityPolicy(base));
    expect(csp.get("script-src")).toEqual(["'self'", `'nonce-${base.nonce}'`, "'strict-dynamic'"]);
    expect(csp.get("script-src")).not.toContain("'unsafe-inline'");
    expect(csp.get("style-src")).toEqual(["'self'", `'nonce-${base.nonce}'`]);
    expect(csp.get("default-src")).toEqual(["'self'"]);
    expect(csp.get("object-src")).toEqual(["'none'"]);
    expect(csp.get("base-uri")).toEqual(["'none'"]);
  });

  it("forbids framing, and lets forms go to the app and the service only", () => {
    const csp = directives(contentSecurityPolicy(base));
    expect(csp.get("frame-ancestors")).toEqual(["'none'"]);
    expect(csp.get("form-action")).toEqual(["'self'", "https://portal.example-service.com"]);
  });

  it("allows eval and inline <style> in development only (React's debugging aids, the dev overlay)", () => {
    const dev = directives(contentSecurityPolicy({ ...base, development: true }));
    expect(dev.get("script-src")).toContain("'unsafe-eval'");
    expect(dev.get("style-src")).toContain("'unsafe-inline'");
    const prod = contentSecurityPolicy(base);
    expect(prod).not.toContain("'unsafe-eval'");
    expect(directives(prod).get("style-src")).not.toContain("'unsafe-inline'");
  });

  it("upgrades insecure requests only when the app is served over https", () => {
    expect(directives(contentSecurityPolicy(base)).has("upgrade-insecure-requests")).toBe(true);
    expect(directives(contentSecurityPolicy({ ...base, appUrl: "http://localhost:3000" })).has("upgrade-insecure-requests")).toBe(false);
  });
});

describe("the header set", () => {
  it("has framing, sniffing and referrer protection on every page", () => {
    const headers = securityHeaders(base);
    expect(headers).toMatchObject({
      "X-Frame-Options": "DENY",
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "strict-origin-when-cross-origin",
    });
    expect(securityHeaders({ ...base, referrerPolicy: "no-referrer" })["Referrer-Policy"]).toBe("no-referrer");
  });

  it("sends HSTS for an https APP_URL, and never over plain http (it would pin localhost)", () => {
    expect(securityHeaders(base)["Strict-Transport-Security"]).toBe("max-age=31536000; includeSubDomains");
    expect(securityHeaders({ ...base, appUrl: "http://localhost:3000" })).not.toHaveProperty("Strict-Transport-Security");
    expect(securityHeaders({ ...base, appUrl: "http://partner.example.com" })).not.toHaveProperty("Strict-Transport-Security");
  });
});

describe("createNonce", () => {
  it("is fresh and carries 128 random bits", () => {
    const nonces = new Set(Array.from({ length: 100 }, createNonce));
    expect(nonces.size).toBe(100);
    for (const nonce of nonces) expect(Buffer.from(nonce, "base64")).toHaveLength(16);
  });
});
