// The product's names, in one place. A fork makes the template its own with
//
//   npm run rename -- "<Display name>" <slug>            (scripts/rename.ts; README.md, "Make it yours")
//
// which rewrites the three literals of PRODUCT_IDENTITY below, and the files that cannot import this
// module (package.json, package-lock.json, compose.yaml, .env.example, prisma.config.ts);
// tests/unit/product-names.test.ts fails when one of those drifts from what this module derives.
//
// Every other name is derived from the slug, one way, here (the last column: the template's own,
// from the slug partner-app):
//
//   package name (package.json)             the slug                         partner-app
//   log lines' `service` field (lib/log.ts) the slug                         partner-app
//   OpenTelemetry service names             the slug, and slug + "-worker"   partner-app, partner-app-worker
//   OpenTelemetry tracer and meter scope    the slug                         partner-app
//   metric and attribute prefix             the slug with "-" → "_"          partner_app.token.refreshes
//   cookie names                            the slug + "." + what it holds   partner-app.session-token
//   database name and user (compose, dev)   the slug with "-" → "_"          partner_app
//   outbound User-Agent, PostgreSQL         the slug + what it is            partner-app-alerts/1,
//     application_name                                                         partner-app refresh lock
//   request arrival stamp (lib/http/arrival.ts) "x-" + slug + "-arrived-at"  x-partner-app-arrived-at
//
// Not derived, on purpose: the keys a module keeps on globalThis (Symbol.for("partner-app.…"),
// partnerAppDb) and the HKDF label of the staff device cookie (lib/auth/staff-device.ts). No one
// outside the process sees them, and the label is a fixed part of a MAC's input, not a name.
//
// Changing them has effects outside the code (dashboards, alert rules, signed-in browsers, the local
// database): README.md, "Make it yours", lists them.
//
// Not "server-only": nothing here is secret, and a page or a client component may show the display
// name. Pure: no environment, no I/O (the base layer of .dependency-cruiser.mjs).
import { z } from "zod";

/**
 * What `npm run rename` rewrites: the name people read, the mark the header shows before it, and the
 * slug every operational name is derived from. Keep each on its own line, as written: the script
 * finds them by their key.
 */
export const PRODUCT_IDENTITY = {
  displayName: "Partner App",
  mark: "⚡",
  slug: "partner-app",
} as const satisfies ProductIdentity;

export type ProductIdentity = { displayName: string; mark: string; slug: string };

/**
 * A slug becomes an npm package name, a PostgreSQL identifier (with "_"), a cookie name and an
 * OpenTelemetry instrument name: each accepts lower-case letters, digits and single inner hyphens
 * starting with a letter, and PostgreSQL cuts identifiers at 63 bytes.
 */
export const SlugSchema = z
  .string()
  .max(40, "the slug is at most 40 characters")
  .regex(/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/, "the slug is lower-case letters, digits and single hyphens, starting with a letter (e.g. volt-fleet)");

/**
 * Shown in the page title, the header and the service's consent screen (APP_NAME, the local
 * registration), and written unquoted into .env.example: letters, digits, spaces and plain
 * punctuation, none of which a dotenv file or a Markdown table reads as syntax (`#`, quotes, `$`, `|`).
 */
export const DisplayNameSchema = z
  .string()
  .trim()
  .min(1, { error: "the display name is empty", abort: true })
  .max(60, "the display name is at most 60 characters")
  .regex(/^[\p{L}\p{N}][\p{L}\p{N} .,'&()+:!?/-]*$/u, "the display name is letters, digits, spaces and . , ' & ( ) + : ! ? / - (starting with a letter or digit)");

/** A few characters: an emoji, initials or a short word; no quotes, no markup, no control characters. */
export const MarkSchema = z
  .string()
  .trim()
  .min(1, { error: "the mark is empty", abort: true })
  .refine((mark) => [...mark].length <= 8, "the mark is at most 8 characters")
  .refine((mark) => !/[\p{Cc}"'`<>&\\]/u.test(mark), "the mark has no quotes, <, >, &, \\ or control characters");

export const ProductIdentitySchema = z.object({ displayName: DisplayNameSchema, mark: MarkSchema, slug: SlugSchema });

/** Every name the product uses, derived from its identity as the table at the top of this file says. */
export function productNames(identity: ProductIdentity) {
  const { displayName, mark, slug } = identity;
  const snake = slug.replaceAll("-", "_");
  return {
    displayName,
    mark,
    slug,
    packageName: slug,
    logService: slug,
    otelServiceName: { app: slug, worker: `${slug}-worker` },
    telemetryScope: slug,
    /** Metric names and the app's own span attributes: `${metricPrefix}.token.refreshes`. */
    metricPrefix: snake,
    /**
     * Without the `__Secure-`/`__Host-` prefix, which the module that sets each cookie adds on https.
     * Named after the product rather than next-auth's defaults so that two apps on one host
     * (localhost during development) never read or overwrite each other's cookies.
     */
    cookies: {
      session: `${slug}.session-token`,
      csrf: `${slug}.csrf-token`,
      callbackUrl: `${slug}.callback-url`,
      staffDevice: `${slug}.staff-device`,
      pendingSignIn: `${slug}.pending-sign-in`,
    },
    /** compose.yaml's database and user, and the embedded database of `npm run dev`. */
    databaseName: snake,
    alertsUserAgent: `${slug}-alerts/1`,
    /** PostgreSQL's application_name for a connection with a purpose, as pg_stat_activity shows it. */
    postgresApplicationName: (purpose: string) => `${slug} ${purpose}`,
    /** The request header that carries when a request reached the process (lib/http/arrival.ts). */
    arrivalHeader: `x-${slug}-arrived-at`,
    /** The prefix of the client_id `npm run dev` registers with the sandbox (scripts/lib/local-env.ts). */
    localClientIdPrefix: slug,
  };
}

export type ProductNames = ReturnType<typeof productNames>;

/** The names this copy of the template runs with. */
export const PRODUCT: ProductNames = productNames(PRODUCT_IDENTITY);
