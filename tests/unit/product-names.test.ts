// The product's names (lib/config/product.ts): what a slug and a display name may be, how every
// operational name is derived from the slug, and the files that cannot import the module (package.json,
// package-lock.json, compose.yaml, .env.example, prisma.config.ts) still holding the module's names, and no other code
// writing a database name of its own (the conformance run's clock script once did).
// Nothing here writes out a shipped name: after `npm run rename` these tests pass as they are.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DisplayNameSchema, MarkSchema, PRODUCT, PRODUCT_IDENTITY, ProductIdentitySchema, SlugSchema, productNames } from "@/lib/config/product";
import { devDatabaseUrl } from "@/scripts/lib/local-env";

const root = path.resolve(__dirname, "../..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");

describe("the product's names", () => {
  it("derive every operational name from the slug, one way", () => {
    const { postgresApplicationName, ...names } = productNames({ displayName: "Volt Fleet", mark: "VF", slug: "volt-fleet" });
    expect(names).toEqual({
      displayName: "Volt Fleet",
      mark: "VF",
      slug: "volt-fleet",
      packageName: "volt-fleet",
      logService: "volt-fleet",
      otelServiceName: { app: "volt-fleet", worker: "volt-fleet-worker" },
      telemetryScope: "volt-fleet",
      metricPrefix: "volt_fleet",
      cookies: {
        session: "volt-fleet.session-token",
        csrf: "volt-fleet.csrf-token",
        callbackUrl: "volt-fleet.callback-url",
        staffDevice: "volt-fleet.staff-device",
        pendingSignIn: "volt-fleet.pending-sign-in",
      },
      databaseName: "volt_fleet",
      alertsUserAgent: "volt-fleet-alerts/1",
      arrivalHeader: "x-volt-fleet-arrived-at",
      localClientIdPrefix: "volt-fleet",
    });
    expect(postgresApplicationName("refresh lock")).toBe("volt-fleet refresh lock");
  });

  it("this copy runs with: a valid identity, and the names derived from it", () => {
    expect(ProductIdentitySchema.parse(PRODUCT_IDENTITY)).toEqual(PRODUCT_IDENTITY);
    expect(JSON.stringify(PRODUCT)).toBe(JSON.stringify(productNames(PRODUCT_IDENTITY)));
  });

  it("accept a slug of lower-case letters, digits and single inner hyphens, starting with a letter, and nothing else", () => {
    for (const slug of ["volt-fleet", "a1", "fleet2go", "x".repeat(40)]) expect(SlugSchema.safeParse(slug).success, slug).toBe(true);
    for (const slug of ["", "Volt-Fleet", "volt_fleet", "volt fleet", "-volt", "volt-", "volt--fleet", "1volt", "volt.fleet", "x".repeat(41)]) {
      expect(SlugSchema.safeParse(slug).success, slug).toBe(false);
    }
  });

  it("accept a display name of letters, digits, spaces and plain punctuation, up to 60 characters", () => {
    for (const name of ["Volt Fleet", "Fleet & Co.", "Ø-Lading 2", "O'Neil Charging", "Volt: Fleet (EU)"]) expect(DisplayNameSchema.safeParse(name).success, name).toBe(true);
    for (const name of ["", "   ", "A#B", 'Say "hi"', "$HOME", "a|b", "line\nbreak", "<b>Volt</b>", "x".repeat(61)]) {
      expect(DisplayNameSchema.safeParse(name).success, name).toBe(false);
    }
  });

  it("accept a mark of a few characters without quotes or markup", () => {
    for (const mark of ["⚡", "VF", "🔌 EV"]) expect(MarkSchema.safeParse(mark).success, mark).toBe(true);
    for (const mark of ["", '"', "<b>", "a\tb", "123456789"]) expect(MarkSchema.safeParse(mark).success, mark).toBe(false);
  });
});

describe("the files that cannot import lib/config/product.ts", () => {
  it("package.json and package-lock.json carry the package name", () => {
    expect((JSON.parse(read("package.json")) as { name: string }).name).toBe(PRODUCT.packageName);
    const lock = JSON.parse(read("package-lock.json")) as { name: string; packages: Record<string, { name?: string }> };
    expect(lock.name).toBe(PRODUCT.packageName);
    expect(lock.packages[""]?.name).toBe(PRODUCT.packageName);
  });

  it("compose.yaml's database, user, health check and every DATABASE_URL use the database name", () => {
    const compose = read("compose.yaml");
    const db = PRODUCT.databaseName;
    expect(compose).toContain(`POSTGRES_DB: ${db}\n`);
    expect(compose).toContain(`POSTGRES_USER: ${db}\n`);
    expect(compose).toContain(`pg_isready -U ${db} -d ${db}"`);
    const urls = [...compose.matchAll(/DATABASE_URL: (\S+)/g)].map((m) => m[1]);
    expect(urls).toHaveLength(3); // migrate, app, worker
    for (const url of urls) expect(url).toBe(`postgresql://${db}:\${POSTGRES_PASSWORD}@db:5432/${db}`);
  });

  it(".env.example and prisma.config.ts name the product as the module does", () => {
    const example = read(".env.example");
    expect(example.split("\n")).toContain(`APP_NAME=${PRODUCT.displayName}`);
    expect(example).toMatch(new RegExp(`^DATABASE_URL=postgresql://\\S+:5432/${PRODUCT.databaseName}$`, "m"));
    expect(example).toMatch(new RegExp(`^# ALERT_WEBHOOK_URL=https://\\S+/hooks/${PRODUCT.slug}$`, "m"));
    expect(read("prisma.config.ts")).toContain(`"postgresql://localhost:5432/${PRODUCT.databaseName}"`);
  });
});

describe("the database name, outside the files the rename rewrites", () => {
  it("npm run dev's database, and what the conformance run's clock script ages, is named after the product unless DATABASE_URL says otherwise", () => {
    expect(new URL(devDatabaseUrl({}, {})).pathname).toBe(`/${PRODUCT.databaseName}`);
    expect(new URL(devDatabaseUrl({ DATABASE_PORT: "55432" }, {})).port).toBe("55432");
    expect(devDatabaseUrl({}, { DATABASE_URL: "postgresql://u:p@db:5432/theirs" })).toBe("postgresql://u:p@db:5432/theirs");
    expect(devDatabaseUrl({ DATABASE_URL: "postgresql://u:p@db:5432/shell" }, { DATABASE_URL: "postgresql://u:p@db:5432/file" })).toBe("postgresql://u:p@db:5432/shell");
  });

  it("no code writes a database name into a postgresql:// URL (the rename could not follow it)", () => {
    const code = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "*.ts", "*.tsx", "*.mjs"], { cwd: root, encoding: "utf8" })
      .split("\n")
      .filter((file) => file && !file.startsWith("tests/") && file !== "prisma.config.ts" && existsSync(path.join(root, file)));
    const named = code.flatMap((file) =>
      [...read(file).matchAll(/postgres(?:ql)?:\/\/[^"'`\n]*\/[A-Za-z_][\w-]*["'`]/g)].map((m) => `${file}: ${m[0]}`),
    );
    expect(named).toEqual([]);
  });
});
