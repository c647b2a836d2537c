// lib/env.ts: values that can never work are refused at start-up with a message that says the fix.
import { readFileSync } from "node:fs";
import { parseEnv } from "node:util";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { environmentProblems, oauthIssuerSchema, partnerApiBaseUrlSchema } from "@/lib/env";
import { jobsShape } from "@/lib/env/jobs";
import { generateLocalEnv } from "../../scripts/lib/local-env";

describe("OAUTH_ISSUER", () => {
  it.each(["https://idp.example.com", "https://idp.example.com/", "https://idp.example.com/oauth", "http://localhost:4000/idp"])(
    "accepts %s",
    (issuer) => {
      expect(oauthIssuerSchema.safeParse(issuer).success).toBe(true);
    },
  );

  // Discovery compares the document's issuer with this value exactly; an issuer with a path never
  // ends in a slash, so this one could never match.
  it("refuses a slash after a path, naming the fix", () => {
    const parsed = oauthIssuerSchema.safeParse("https://idp.example.com/oauth/");
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toContain("https://idp.example.com/oauth, not https://idp.example.com/oauth/");
  });

  it("still refuses what is not an http(s) URL", () => {
    expect(oauthIssuerSchema.safeParse("idp.example.com/oauth").success).toBe(false);
    expect(oauthIssuerSchema.safeParse("ftp://idp.example.com").success).toBe(false);
  });
});

// The client resolves "/api/v1/…" against this value, which drops a path: refused rather than ignored.
describe("PARTNER_API_BASE_URL", () => {
  it.each(["https://api.example.com", "https://api.example.com/", "http://localhost:4010"])("accepts the origin %s", (url) => {
    expect(partnerApiBaseUrlSchema.safeParse(url).success).toBe(true);
  });

  it.each(["https://api.example.com/partner", "https://api.example.com/api/v1"])("refuses %s, which has a path, naming the fix", (url) => {
    const parsed = partnerApiBaseUrlSchema.safeParse(url);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toContain("origin only");
  });
});

// Issue 10: a deployment refuses what would let anyone in (a published NEXTAUTH_SECRET), plain
// http, and the development database, naming every problem at once.
describe("environmentProblems", () => {
  const exampleValues = parseEnv(readFileSync(".env.example", "utf8")) as Record<string, string>;
  const local = generateLocalEnv({ app: 3000, sandbox: 4010 });
  const names = (problems: string[]) => [...new Set(problems.map((p) => p.split(":")[0]))].sort();

  it("names every required variable when nothing is configured", () => {
    expect(names(environmentProblems({ NODE_ENV: "production" }))).toEqual(
      [
        "APP_URL",
        "DATABASE_URL",
        "NEXTAUTH_SECRET",
        "OAUTH_CLIENT_ID",
        "OAUTH_CLIENT_SECRET",
        "OAUTH_ISSUER",
        "OAUTH_REDIRECT_URI",
        "PARTNER_API_BASE_URL",
        "TOKEN_ENCRYPTION_KEYS",
        "WEBHOOK_SECRET",
      ].sort(),
    );
  });

  it("refuses every secret, address and account copied from .env.example in production", () => {
    const problems = environmentProblems({ ...exampleValues, NODE_ENV: "production" });
    expect(names(problems)).toEqual(
      expect.arrayContaining([
        "APP_URL",
        "DATABASE_URL",
        "NEXTAUTH_SECRET",
        "NEXTAUTH_URL",
        "TOKEN_ENCRYPTION_KEYS",
        "CRON_SECRET",
        "STAFF_USERS",
        "OAUTH_ISSUER",
        "OAUTH_CLIENT_ID",
        "OAUTH_CLIENT_SECRET",
        "OAUTH_REDIRECT_URI",
        "PARTNER_API_BASE_URL",
        "WEBHOOK_SECRET",
        "OPERATOR_PORTAL_URL",
      ]),
    );
    expect(problems.find((p) => p.startsWith("NEXTAUTH_SECRET"))).toContain("placeholder");
  });

  // Issue 14: a bad STAFF_USERS entry (e.g. a role misspelt) stops start-up, rather than surfacing as
  // failed sign-ins, naming the entry and never its hash.
  it("refuses a STAFF_USERS entry that cannot be read, at start-up", () => {
    const hash = local.STAFF_USERS!.split(",")[0]!.split("=")[1]!;
    const dev = { ...local, DATABASE_URL: "postgresql://postgres:postgres@localhost:5432/app", NODE_ENV: "development" };
    expect(environmentProblems({ ...dev, STAFF_USERS: `ops@partner.example=${hash}=viewer` })).toEqual([]);
    const problems = environmentProblems({ ...dev, STAFF_USERS: `ops@partner.example=${hash}=admin` });
    expect(problems).toEqual(["STAFF_USERS: entry 1 (ops@partner.example): the role must be viewer or operator"]);
    expect(problems.join("\n")).not.toContain(hash);
  });

  it("accepts what `npm run dev` and `npm test` write, in development and for the production build on localhost", () => {
    expect(environmentProblems({ ...local, DATABASE_URL: "postgresql://postgres:postgres@localhost:5432/app", NODE_ENV: "development" })).toEqual([]);
    expect(environmentProblems({ ...local, DATABASE_URL: "postgresql://postgres:postgres@localhost:5432/app", NODE_ENV: "production" })).toEqual([]);
  });

  it("in a deployment: https only, the app's own secrets 32 characters or more, not the embedded database", () => {
    const deployed = {
      ...local,
      NODE_ENV: "production",
      APP_URL: "https://partner.acme-charging.eu",
      NEXTAUTH_URL: "https://partner.acme-charging.eu",
      OAUTH_REDIRECT_URI: "https://partner.acme-charging.eu/oauth/callback",
      OAUTH_ISSUER: "http://idp.service.eu",
      PARTNER_API_BASE_URL: "https://api.service.eu",
      OPERATOR_PORTAL_URL: "https://portal.service.eu",
      STAFF_USERS: "",
      CRON_SECRET: "x".repeat(31),
      DATABASE_URL: "postgresql://postgres:postgres@db.internal:5432/app",
    };
    expect(environmentProblems(deployed)).toEqual([
      "CRON_SECRET: use at least 32 random characters",
      "OAUTH_ISSUER: must use https in production (plain http carries codes, tokens and sessions in the clear)",
      "DATABASE_URL: points at the embedded development database (postgres:postgres); use your production PostgreSQL",
      // The local env's alert address (the sandbox's sink) came along too: alerts travel over https as well.
      "ALERT_WEBHOOK_URL: must use https in production",
    ]);
    // Outside a deployment, plain http is for loopback only.
    expect(environmentProblems({ ...local, DATABASE_URL: "postgresql://u:p@localhost/app", OPERATOR_PORTAL_URL: "http://portal.service.eu" })).toEqual([
      "OPERATOR_PORTAL_URL: plain http is allowed only for localhost (use https)",
    ]);
  });
});

describe("JOB_EXPIRE_SECONDS", () => {
  const local = generateLocalEnv({ app: 3000, sandbox: 4010 });
  const problemsWith = (value: string) => environmentProblems({ ...local, JOB_EXPIRE_SECONDS: value }).filter((p) => p.startsWith("JOB_EXPIRE_SECONDS"));

  it("accepts per-job expiries within pg-boss's bound (1 s to 24 h)", () => {
    expect(problemsWith("keep-alive=300,sync=1800")).toEqual([]);
    expect(problemsWith(" reconcile=1 , retention=86400 ")).toEqual([]);
  });

  it.each(["keep-alive", "keep-alive=0", "sync=86401", "sync=1.5", "sync=-5", "payments=60", "keep-alive:300"])("refuses %j, naming the form", (value) => {
    expect(problemsWith(value)).toEqual([expect.stringContaining("<keep-alive|reconcile|sync|retention>=<seconds, 1-86400>")]);
  });
});

describe("KEEP_ALIVE_CONCURRENCY", () => {
  const local = generateLocalEnv({ app: 3000, sandbox: 4010 });
  const problemsWith = (value: string | undefined) =>
    environmentProblems({ ...local, KEEP_ALIVE_CONCURRENCY: value }).filter((p) => p.startsWith("KEEP_ALIVE_CONCURRENCY"));

  it("is keep-alive's own number, apart from JOB_CONCURRENCY: 25 when unset, 1 to 200 when set", () => {
    expect(problemsWith(undefined)).toEqual([]);
    const jobs = z.object(jobsShape);
    expect(jobs.parse({})).toMatchObject({ KEEP_ALIVE_CONCURRENCY: 25, JOB_CONCURRENCY: 10 });
    expect(jobs.parse({ KEEP_ALIVE_CONCURRENCY: "80", JOB_CONCURRENCY: "4" })).toMatchObject({ KEEP_ALIVE_CONCURRENCY: 80, JOB_CONCURRENCY: 4 });
    expect(problemsWith("1")).toEqual([]);
    expect(problemsWith("200")).toEqual([]);
  });

  it.each(["0", "201", "2.5", "-3", "many"])("refuses %j at start-up", (value) => {
    expect(problemsWith(value)).toHaveLength(1);
  });
});
