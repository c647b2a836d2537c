// The import rules of this template, checked by `npm run lint` (dependency-cruiser; the house style
// is in README.md, "Layout"). Each rule is a way the layers must never point; a fork that adds a room
// adds its path to the layer it belongs to, here.
//
// From the top down:
//   app/, proxy.ts, scripts/       routes, pages, the worker and the command-line tools: they use lib/
//   lib/jobs/engine.ts, cron-route the work of each job kind and what runs it (worker and cron routes only)
//   lib/admin, dashboard, jobs/*   the pages' reads and the jobs: they call the domain
//   lib/installs, oauth, sync,     the domain
//     webhooks, auth
//   lib/partner-api, alerts,       the service's API client, alerts, the install state machine (which
//     installs/state.ts,           the token client calls when a grant dies, contract §3 and §7; it imports
//     jobs/enqueue, jobs/queues    only db, log and alerts), and the job engine's sending half
//   lib/env, log, db, telemetry,   the base: imports nothing else of lib/
//     http, config, shutdown,
//     jobs/kinds, ...
//   sandbox/                       a world of its own: the service, written apart from the app
//
// Known exceptions, still to be removed, are listed in .dependency-cruiser-known-violations.json and
// skipped by `--ignore-known`: a new violation fails `npm run lint`; fixing an old one shrinks the list
// (regenerate it with `npx depcruise --config .dependency-cruiser.mjs --output-type baseline
// --output-to .dependency-cruiser-known-violations.json app lib sandbox scripts proxy.ts instrumentation.ts`).
// tests/unit/import-rules.test.ts proves the rules can fail.

/**
 * Modules of lib/ that import nothing else of lib/. The job kinds' declarations (lib/jobs/kinds.ts,
 * facts only) are among them, so that the environment's schema can accept exactly the declared kinds.
 */
const BASE = "^lib/(env|log|shutdown|rate-limit|try-semaphore)\\.ts$|^lib/(config|db|env|http|telemetry)/|^lib/jobs/kinds\\.ts$";
/** The job engine's sending half and its declarations: below everything that sends a job. */
const JOB_SENDING = "^lib/jobs/(enqueue|queues|schema)\\.ts$";
/** The job registry and what runs it: only the worker and the cron routes may import it. */
const JOB_RUNNING = "^lib/jobs/(engine|cron-route)\\.ts$";
const DOMAIN = "^lib/(installs|oauth|sync|webhooks|auth)/";
/** Under the domain: the API client, alerts, and the install state machine every part of the domain moves installs with. */
const UNDER_DOMAIN = "^lib/(partner-api|alerts)/|^lib/installs/state\\.ts$";
const PAGES_AND_JOBS = "^lib/(admin|dashboard)/|^lib/jobs/(?!enqueue\\.ts$|kinds\\.ts$|queues\\.ts$|schema\\.ts$)|^lib/health\\.ts$";

/** @type {import("dependency-cruiser").IConfiguration} */
const config = {
  forbidden: [
    {
      name: "no-circular",
      comment:
        "A circle of imports (type-only ones count): each module in it depends on itself, so none can be read, tested or changed alone. Move what both sides share to a module below both.",
      severity: "error",
      from: { path: "^(app|lib|sandbox|conformance)/" },
      to: { circular: true },
    },
    {
      name: "lib-not-to-app",
      comment: "lib/ is the domain; app/ is the thin glue that uses it (docs: README.md, Layout). Never the reverse.",
      severity: "error",
      from: { path: "^lib/" },
      to: { path: "^(app/|proxy\\.ts$|instrumentation\\.ts$)" },
    },
    {
      name: "sandbox-stands-alone",
      comment:
        "The sandbox is an independent implementation of the service: sharing code with the app would let both share one misunderstanding of the contract (sandbox/README.md).",
      severity: "error",
      from: { path: "^sandbox/" },
      to: { path: "^(app|lib|scripts)/|^(proxy|instrumentation)\\.ts$" },
    },
    {
      name: "conformance-judges-from-outside",
      comment:
        "The conformance run (conformance/) judges an app by its addresses alone, so that it judges a fork or an app in another language the same way: it imports nothing of app/, lib/, scripts/ or the sandbox, whose control API it reaches over HTTP as any tool would (docs/conformance.md).",
      severity: "error",
      from: { path: "^conformance/" },
      to: { path: "^(app|lib|scripts|sandbox)/|^(proxy|instrumentation)\\.ts$" },
    },
    {
      name: "app-and-lib-not-to-sandbox",
      comment: "The app talks to the sandbox over HTTP only, as it would to the service.",
      severity: "error",
      from: { path: "^(app|lib)/|^(proxy|instrumentation)\\.ts$" },
      to: { path: "^sandbox/" },
    },
    {
      name: "scripts-through-lib",
      comment: "Scripts use the app's code through lib/, never a route or a page of app/.",
      severity: "error",
      from: { path: "^scripts/" },
      to: { path: "^app/" },
    },
    {
      name: "base-imports-no-domain",
      comment: "env, log, db, telemetry and the HTTP helpers sit under everything: they import nothing else of lib/.",
      severity: "error",
      from: { path: BASE },
      to: { path: "^lib/", pathNot: BASE },
    },
    {
      name: "sending-below-running",
      comment:
        "Only the worker and the cron routes import the job registry (lib/jobs/engine.ts); everything else that needs a job sends it through lib/jobs/enqueue.ts, which imports none of the jobs.",
      severity: "error",
      from: { path: "^lib/", pathNot: "^lib/jobs/" },
      to: { path: JOB_RUNNING },
    },
    {
      name: "job-registry-for-runners-only",
      comment: "Outside lib/, the job registry is for the worker (scripts/worker.ts) and the cron routes (app/api/cron/*).",
      severity: "error",
      from: { path: "^(app|scripts)/|^(proxy|instrumentation)\\.ts$", pathNot: "^scripts/worker\\.ts$|^app/api/cron/" },
      to: { path: "^lib/jobs/engine\\.ts$" },
    },
    {
      name: "job-sending-imports-base-only",
      comment: "The job engine's sending half imports only the base, so that anything may send a job without a circle.",
      severity: "error",
      from: { path: JOB_SENDING },
      to: { path: "^lib/", pathNot: `${BASE}|${JOB_SENDING}` },
    },
    {
      name: "api-client-alerts-and-state-machine-below-domain",
      comment: "The partner API client, the alerts and the install state machine are used by the domain; they do not call it.",
      severity: "error",
      from: { path: UNDER_DOMAIN },
      to: { path: `${DOMAIN}|${PAGES_AND_JOBS}`, pathNot: UNDER_DOMAIN },
    },
    {
      name: "oauth-below-installs",
      comment:
        "The token client and vault (lib/oauth) are used by the install flow (lib/installs), not the reverse; they may move an install through the state machine (lib/installs/state.ts), which sits below both.",
      severity: "error",
      from: { path: "^lib/oauth/" },
      to: { path: "^lib/(installs|sync|webhooks)/", pathNot: "^lib/installs/state\\.ts$" },
    },
    {
      name: "domain-below-pages-and-jobs",
      comment: "Pages' reads (lib/admin, lib/dashboard) and jobs call the domain; the domain never calls them.",
      severity: "error",
      from: { path: `${DOMAIN}|${UNDER_DOMAIN}|${JOB_SENDING}|${BASE}` },
      to: { path: PAGES_AND_JOBS },
    },
  ],
  options: {
    // Only the project's own files: packages are leaves, and the generated Prisma client is one too.
    doNotFollow: { path: ["node_modules"] },
    exclude: { path: ["^\\.next", "^lib/db/generated/", "^tests/fixtures/import-rules/"] },
    // Type-only imports count: a circle of types is still a circle for a reader.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".tsx", ".mts", ".mjs", ".js", ".cjs", ".json"],
    },
    reporterOptions: {},
  },
};

export default config;
