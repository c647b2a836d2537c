// reauth_url is followed only to the service's own origins (lib/partner-api/service-origins.ts), and
// REAUTH_URL_ORIGINS accepts origins only (lib/env.ts).
import { describe, expect, it } from "vitest";
import { OriginListSchema } from "@/lib/env";
import { isServiceUrl, originForLog } from "@/lib/partner-api/service-origins";

const origins = new Set(["https://portal.example-service.com", "http://localhost:4010"]);

describe("isServiceUrl", () => {
  it("accepts a URL at one of the service's origins, whatever its path and query", () => {
    expect(isServiceUrl("https://portal.example-service.com/reauth/7?ticket=abc", origins)).toBe(true);
    expect(isServiceUrl("https://PORTAL.example-service.com:443/reauth/7", origins)).toBe(true); // the same origin, spelt differently
    expect(isServiceUrl("http://localhost:4010/portal/reauth/7", origins)).toBe(true);
  });

  it("refuses any other origin, look-alikes included", () => {
    for (const url of [
      "https://attacker.example/portal/reauth/7",
      "https://portal.example-service.com.attacker.example/reauth/7",
      "https://portal.example-service.com@attacker.example/reauth/7",
      "https://portal.example-service.com:8443/reauth/7", // another port is another origin
      "http://portal.example-service.com/reauth/7", // not https
      "http://localhost:4999/portal/reauth/7",
    ]) {
      expect(isServiceUrl(url, origins), url).toBe(false);
    }
  });

  it("refuses what is not an http(s) URL at all", () => {
    for (const url of ["javascript:alert(1)", "data:text/html,hi", "//portal.example-service.com/reauth", "not a url", ""]) {
      expect(isServiceUrl(url, origins), url).toBe(false);
    }
  });
});

describe("originForLog", () => {
  it("keeps the origin and drops the path and query", () => {
    expect(originForLog("https://attacker.example/phish/path?ticket=secret#x")).toBe("https://attacker.example");
    expect(originForLog("not a url")).toBe("(not a URL)");
  });
});

describe("REAUTH_URL_ORIGINS", () => {
  it("is a comma-separated list of origins, normalised", () => {
    expect(OriginListSchema.parse(" https://Portal.Example-Service.com , http://localhost:4010/ ")).toEqual([
      "https://portal.example-service.com",
      "http://localhost:4010",
    ]);
  });

  it("refuses anything that is not an https origin (http only for loopback)", () => {
    for (const value of ["https://portal.example-service.com/reauth", "https://portal.example-service.com?x=1", "http://portal.example-service.com", "portal.example-service.com", ",", "ftp://x.example"]) {
      expect(OriginListSchema.safeParse(value).success, value).toBe(false);
    }
  });
});
