// Sandbox state and its persistence. Everything that changes (installs, consumers, tokens, codes, token chains and
// statistics, consent requests, the app's registration, kept webhook deliveries, the clock offset, the event log)
// lives in one object, saved atomically to
// ${SANDBOX_DATA_DIR}/state.json (write a temp file, then rename) shortly after each mutation.
// Tokens, codes, tickets and consent challenges are stored as sha256 hashes, never in clear.
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { installConfigSchema } from "./install-config.js";

const isoSchema = z.string();

const installSchema = z.object({
  installId: z.number().int(),
  operatorId: z.number().int(),
  clientId: z.string(),
  slug: z.string(),
  status: z.enum(["active", "revoked"]),
  /** Granted data scopes plus offline_access, exactly as shown at consent. */
  scopes: z.array(z.string()),
  consumerId: z.string(),
  needsReauth: z.boolean(),
  /** When the current NEEDS_REAUTH flag was set (null when not flagged). */
  needsReauthSince: isoSchema.nullable().default(null),
  /** The per-install configuration (null only in state files written before it existed). */
  config: installConfigSchema.nullable().default(null),
  createdAt: isoSchema,
  updatedAt: isoSchema.nullable(),
  revokedAt: isoSchema.nullable(),
});

const consumerSchema = z.object({
  id: z.string(),
  installId: z.number().int(),
  operatorId: z.number().int(),
  name: z.string(),
  status: z.enum(["active", "disabled"]),
  scopes: z.array(z.string()),
  createdAt: isoSchema,
  updatedAt: isoSchema.nullable(),
});

const tokenSchema = z.object({
  kind: z.enum(["access", "refresh"]),
  /** The grant ("request ID" in fosite): every token minted from one code and its refreshes share it. */
  chainId: z.string(),
  clientId: z.string(),
  installId: z.number().int(),
  scopes: z.array(z.string()),
  issuedAtMs: z.number(),
  expiresAtMs: z.number(),
  /** active → used (refresh token that was rotated) or revoked (chain revoked). */
  status: z.enum(["active", "used", "revoked"]),
});

const codeSchema = z.object({
  clientId: z.string(),
  redirectUri: z.string(),
  scopes: z.array(z.string()),
  installId: z.number().int(),
  chainId: z.string(),
  issuedAtMs: z.number(),
  expiresAtMs: z.number(),
  usedAtMs: z.number().nullable(),
});

const authTicketSchema = z.object({
  operatorId: z.number().int(),
  /** Canonical form of the exact query the portal built; any change invalidates the ticket. */
  canonicalQuery: z.string(),
  expiresAtMs: z.number(),
  usedAtMs: z.number().nullable(),
});

const consentRequestSchema = z.object({
  operatorId: z.number().int(),
  clientId: z.string(),
  redirectUri: z.string(),
  scopes: z.array(z.string()),
  state: z.string(),
  createdAtMs: z.number(),
  expiresAtMs: z.number(),
  handledAtMs: z.number().nullable(),
});

/** One grant of the identity provider: a code and everything minted from it (fosite's request ID). */
export const CHAIN_REVOCATION_REASONS = ["refresh_token_reuse", "code_reuse", "client_revocation", "install_revoked"] as const;
const chainSchema = z.object({
  installId: z.number().int(),
  createdAtMs: z.number(),
  revokedAtMs: z.number().nullable(),
  revokedReason: z.enum(CHAIN_REVOCATION_REASONS).nullable(),
});

/** Token-endpoint counters per install (GET /_sandbox/installs/:id/token-stats). */
const tokenStatsSchema = z.object({
  authorizationCodeCalls: z.number().int(),
  refreshTokenCalls: z.number().int(),
  refreshesIssued: z.number().int(),
  chainRevocations: z.number().int(),
});

/** The app's registration as the service holds it; null fields mean "as configured in the environment". */
const appRegistrationSchema = z.object({
  /** Requested scopes once the app owner changed them (console / control API); null = APP_REQUESTED_SCOPES. */
  requestedScopes: z.array(z.string()).nullable(),
  scopesChangedAt: isoSchema.nullable(),
  /** sha256 of a re-issued client secret; null = OAUTH_CLIENT_SECRET. Never the secret itself. */
  clientSecretHash: z.string().nullable(),
  clientSecretRotatedAt: isoSchema.nullable(),
  /** The client was removed from the identity provider: the token endpoint answers "does not exist". */
  clientRemoved: z.boolean(),
});

export const WEBHOOK_EVENT_TYPES = ["install.created", "install.revoked", "install.config.updated"] as const;

const installWebhookDataSchema = z.object({ install_id: z.number().int(), operator_id: z.number().int(), slug: z.string() }).strict();
const configWebhookDataSchema = z.object({ install_id: z.number().int(), operator_id: z.number().int(), config: installConfigSchema }).strict();

/** A delivery as created (kept so that it can be replayed with the same id and data). */
const deliverySchema = z.object({
  id: z.string(),
  type: z.enum(WEBHOOK_EVENT_TYPES),
  data: z.union([installWebhookDataSchema, configWebhookDataSchema]),
  createdAt: isoSchema,
});

const eventValueSchema = z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.string())]);

export const EVENT_TYPES = ["authorize", "consent", "token", "api", "webhook", "install", "control"] as const;
export type EventType = (typeof EVENT_TYPES)[number];

const eventSchema = z.object({
  seq: z.number().int(),
  at: isoSchema,
  type: z.enum(EVENT_TYPES),
  detail: z.record(z.string(), eventValueSchema),
});

const stateSchema = z.object({
  version: z.literal(1),
  clockOffsetSeconds: z.number(),
  nextInstallId: z.number().int(),
  nextEventSeq: z.number().int(),
  installs: z.array(installSchema),
  consumers: z.array(consumerSchema),
  tokens: z.record(z.string(), tokenSchema),
  codes: z.record(z.string(), codeSchema),
  authTickets: z.record(z.string(), authTicketSchema),
  consentRequests: z.record(z.string(), consentRequestSchema),
  events: z.array(eventSchema),
  app: appRegistrationSchema.default({ requestedScopes: null, scopesChangedAt: null, clientSecretHash: null, clientSecretRotatedAt: null, clientRemoved: false }),
  chains: z.record(z.string(), chainSchema).default({}),
  tokenStats: z.record(z.string(), tokenStatsSchema).default({}),
  /** Token-endpoint calls that could not be tied to an install (bad client, unknown code or token...). */
  unattributedTokenCalls: z.number().int().default(0),
  deliveries: z.array(deliverySchema).default([]),
  /** sha256 of deleted tokens → their install, so that calls presenting them still count for the install (token-stats). */
  deletedTokenInstalls: z.record(z.string(), z.number().int()).default({}),
});

export type InstallRecord = z.infer<typeof installSchema>;
export type ConsumerRecord = z.infer<typeof consumerSchema>;
export type TokenRecord = z.infer<typeof tokenSchema>;
export type CodeRecord = z.infer<typeof codeSchema>;
export type AuthTicketRecord = z.infer<typeof authTicketSchema>;
export type ConsentRequestRecord = z.infer<typeof consentRequestSchema>;
export type ChainRecord = z.infer<typeof chainSchema>;
export type ChainRevocationReason = (typeof CHAIN_REVOCATION_REASONS)[number];
export type TokenStatsRecord = z.infer<typeof tokenStatsSchema>;
export type AppRegistration = z.infer<typeof appRegistrationSchema>;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
export type InstallWebhookData = z.infer<typeof installWebhookDataSchema>;
export type ConfigWebhookData = z.infer<typeof configWebhookDataSchema>;
export type WebhookData = InstallWebhookData | ConfigWebhookData;
export type DeliveryRecord = z.infer<typeof deliverySchema>;
export type EventValue = z.infer<typeof eventValueSchema>;
export type EventRecord = z.infer<typeof eventSchema>;
export type SandboxState = z.infer<typeof stateSchema>;

const MAX_EVENTS = 5000;
const MAX_DELIVERIES = 1000;
const MAX_DELETED_TOKENS = 20_000;
const SAVE_DEBOUNCE_MS = 20;

export function emptyState(): SandboxState {
  return {
    version: 1,
    clockOffsetSeconds: 0,
    nextInstallId: 1,
    nextEventSeq: 1,
    installs: [],
    consumers: [],
    tokens: {},
    codes: {},
    authTickets: {},
    consentRequests: {},
    events: [],
    app: { requestedScopes: null, scopesChangedAt: null, clientSecretHash: null, clientSecretRotatedAt: null, clientRemoved: false },
    chains: {},
    tokenStats: {},
    unattributedTokenCalls: 0,
    deliveries: [],
    deletedTokenInstalls: {},
  };
}

export class SandboxStore {
  private saveTimer: NodeJS.Timeout | null = null;
  private saving: Promise<void> = Promise.resolve();

  private constructor(
    readonly file: string,
    public state: SandboxState,
    private readonly log: (line: string) => void,
  ) {}

  /** Loads state.json from dataDir, or starts empty. A file that does not parse is set aside, not lost. */
  static async open(dataDir: string, log: (line: string) => void): Promise<SandboxStore> {
    await mkdir(dataDir, { recursive: true });
    const file = path.join(dataDir, "state.json");
    let raw: string | null = null;
    try {
      raw = await readFile(file, "utf8");
    } catch (error) {
      if (!(error instanceof Error && "code" in error && error.code === "ENOENT")) throw error;
    }
    if (raw === null) return new SandboxStore(file, emptyState(), log);

    let json: unknown = null;
    try {
      json = JSON.parse(raw);
    } catch {
      json = null;
    }
    const parsed = stateSchema.safeParse(json);
    if (parsed.success) return new SandboxStore(file, parsed.data, log);

    const aside = `${file}.unreadable-${Date.now()}`;
    await rename(file, aside);
    log(`state file did not match the expected shape; moved it to ${aside} and started empty`);
    return new SandboxStore(file, emptyState(), log);
  }

  /** Call after every mutation: schedules a debounced atomic save. */
  changed(): void {
    if (this.saveTimer) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = null;
      void this.saveNow();
    }, SAVE_DEBOUNCE_MS);
  }

  /** Writes pending changes now; resolves when the file is on disk. */
  async flush(): Promise<void> {
    if (this.saveTimer) {
      clearTimeout(this.saveTimer);
      this.saveTimer = null;
      await this.saveNow();
    }
    await this.saving;
  }

  private saveNow(): Promise<void> {
    // Saves are chained so two writes never race on the temp file.
    this.saving = this.saving.then(async () => {
      const temp = `${this.file}.tmp-${process.pid}`;
      try {
        await writeFile(temp, `${JSON.stringify(this.state, null, 2)}\n`, { mode: 0o600 });
        await rename(temp, this.file);
      } catch (error) {
        this.log(`could not save state: ${error instanceof Error ? error.message : String(error)}`);
      }
    });
    return this.saving;
  }

  replaceState(next: SandboxState): void {
    this.state = next;
    this.changed();
  }

  /** Appends to the event log. Callers must never pass tokens, codes or secrets in `detail`. */
  addEvent(type: EventType, at: Date, detail: Record<string, EventValue>): EventRecord {
    const event: EventRecord = { seq: this.state.nextEventSeq, at: at.toISOString(), type, detail };
    this.state.nextEventSeq += 1;
    this.state.events.push(event);
    if (this.state.events.length > MAX_EVENTS) this.state.events.splice(0, this.state.events.length - MAX_EVENTS);
    this.changed();
    return event;
  }

  /** Keeps a created webhook delivery for replay (the newest 1,000). */
  addDelivery(delivery: DeliveryRecord): void {
    this.state.deliveries.push(delivery);
    if (this.state.deliveries.length > MAX_DELIVERIES) this.state.deliveries.splice(0, this.state.deliveries.length - MAX_DELIVERIES);
    this.changed();
  }

  findDelivery(id: string): DeliveryRecord | undefined {
    return this.state.deliveries.find((d) => d.id === id);
  }

  /** The install's token-endpoint counters, created on first use. */
  tokenStatsOf(installId: number): TokenStatsRecord {
    const key = String(installId);
    let stats = this.state.tokenStats[key];
    if (!stats) {
      stats = { authorizationCodeCalls: 0, refreshTokenCalls: 0, refreshesIssued: 0, chainRevocations: 0 };
      this.state.tokenStats[key] = stats;
    }
    return stats;
  }

  findActiveInstall(operatorId: number, clientId: string): InstallRecord | undefined {
    return this.state.installs.find((i) => i.operatorId === operatorId && i.clientId === clientId && i.status === "active");
  }

  findInstall(installId: number): InstallRecord | undefined {
    return this.state.installs.find((i) => i.installId === installId);
  }

  findConsumer(consumerId: string): ConsumerRecord | undefined {
    return this.state.consumers.find((c) => c.id === consumerId);
  }

  /** Deletes one token, remembering only which install it belonged to (for token-stats attribution). */
  deleteToken(hash: string): void {
    const token = this.state.tokens[hash];
    if (!token) return;
    delete this.state.tokens[hash];
    this.rememberDeleted(hash, token.installId);
    this.changed();
  }

  /** The install of a deleted token, if it is remembered. */
  installOfDeletedToken(hash: string): number | undefined {
    return this.state.deletedTokenInstalls[hash];
  }

  private rememberDeleted(hash: string, installId: number): void {
    const remembered = this.state.deletedTokenInstalls;
    remembered[hash] = installId;
    const keys = Object.keys(remembered);
    for (let i = 0; i < keys.length - MAX_DELETED_TOKENS; i += 1) {
      const key = keys[i];
      if (key !== undefined) delete remembered[key];
    }
  }

  /** Deletes every token of the install (what revoking a consent does in Hydra). Returns how many went. */
  deleteTokensOfInstall(installId: number): number {
    let removed = 0;
    for (const [hash, token] of Object.entries(this.state.tokens)) {
      if (token.installId === installId) {
        delete this.state.tokens[hash];
        this.rememberDeleted(hash, installId);
        removed += 1;
      }
    }
    this.changed();
    return removed;
  }
}
