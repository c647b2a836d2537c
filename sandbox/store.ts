// Sandbox state and its persistence. Everything that changes (installs, consumers, tokens, codes, token chains and
// statistics, consent requests, the app's registration, kept webhook deliveries, the clock offset, the event log,
// bulk operators, record edits, the live-data setting) lives in one object. It is saved as a snapshot
// (${SANDBOX_DATA_DIR}/state.json) plus a journal of changes (journal.jsonl, one line per save listing the records
// that changed), so that a change writes that change and not the whole state (README decision 42). The journal is
// folded into a new snapshot when it outgrows the snapshot, and at shutdown.
// Tokens, codes, tickets and consent challenges are stored as sha256 hashes, never in clear.
import { mkdir, open, readFile, rename } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { installConfigSchema } from "./install-config.js";
import { trackChanges, type ChangeSink, type CollectionName } from "./state-tracking.js";

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
  /**
   * Which portal button built it: Connect (always shows the consent screen) or Open (README decision 48:
   * skips it when the operator's active install already holds every requested scope).
   */
  purpose: z.enum(["connect", "open"]).default("connect"),
  /** The handshake this request starts (handshake.ts, README decision 52); null in state files written before it. */
  handshake: z.string().nullable().default(null),
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
  /** The handshake it belongs to (README decision 52). */
  handshake: z.string().nullable().default(null),
});

/** One grant of the identity provider: a code and everything minted from it (fosite's request ID). */
export const CHAIN_REVOCATION_REASONS = ["refresh_token_reuse", "code_reuse", "client_revocation", "install_revoked"] as const;
const chainSchema = z.object({
  installId: z.number().int(),
  createdAtMs: z.number(),
  revokedAtMs: z.number().nullable(),
  revokedReason: z.enum(CHAIN_REVOCATION_REASONS).nullable(),
  /** The handshake whose code started the chain (README decision 52); absent for bulk installs and older state. */
  handshake: z.string().optional(),
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

export const EVENT_TYPES = ["portal", "authorize", "consent", "token", "api", "webhook", "install", "control"] as const;
export type EventType = (typeof EVENT_TYPES)[number];

const eventSchema = z.object({
  seq: z.number().int(),
  at: isoSchema,
  type: z.enum(EVENT_TYPES),
  detail: z.record(z.string(), eventValueSchema),
});

/** The per-record edits a test made through the control API (decision 44): deleted, or some fields changed. */
const recordEditSchema = z.object({
  deletedAt: isoSchema.nullable(),
  /** Fields replaced, as the control API validated them. */
  patch: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
  updatedAt: isoSchema.nullable(),
});
const operatorEditsSchema = z.object({
  chargePoints: z.record(z.string(), recordEditSchema),
  charges: z.record(z.string(), recordEditSchema),
  teams: z.record(z.string(), recordEditSchema),
});

/** Data that moves with the clock (live.ts, decision 43): on or off, how many new charges per hour, since when. */
const liveDataSchema = z.object({
  enabled: z.boolean(),
  chargesPerHour: z.number().int(),
  /** Sandbox-clock time it was switched on (or the state began): hour slots count from here. */
  anchorMs: z.number(),
  /** The environment's setting when this one was stored: a start with another one applies the environment's. */
  configured: z.object({ enabled: z.boolean(), chargesPerHour: z.number().int() }).nullable().default(null),
});

/** Operators created through the control API (decision 41): only their numbers and charge counts; their data is derived. */
const bulkOperatorsSchema = z.object({
  count: z.number().int(),
  batches: z.array(z.object({ first: z.number().int(), count: z.number().int(), charges: z.number().int() })),
});

/** The EVSE charge-history beta per operator (energy-beta.ts, decision 47): off unless listed here with enabled true. */
const energyBetaSchema = z.object({
  enabled: z.boolean(),
  /** "current": the sandbox's documented shape; "changed": a later beta shape an app does not know yet (contract §4.3, §9). */
  shape: z.enum(["current", "changed"]),
  changedAt: z.string(),
});

const stateSchema = z.object({
  version: z.literal(1),
  /** Which journal belongs to this snapshot (decision 42); a journal of another generation is stale. */
  journalGeneration: z.number().int().default(0),
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
  /** null: as configured (SANDBOX_LIVE_DATA) since the state began. */
  live: liveDataSchema.nullable().default(null),
  bulkOperators: bulkOperatorsSchema.default({ count: 0, batches: [] }),
  /** Operator id → its edited records. */
  recordEdits: z.record(z.string(), operatorEditsSchema).default({}),
  /** Operator id → its EVSE charge-history beta switch (written as a whole, so one root field). */
  energyBeta: z.record(z.string(), energyBetaSchema).default({}),
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
export type RecordEdit = z.infer<typeof recordEditSchema>;
export type OperatorEdits = z.infer<typeof operatorEditsSchema>;
export type LiveDataRecord = z.infer<typeof liveDataSchema>;
export type BulkOperators = z.infer<typeof bulkOperatorsSchema>;
export type EnergyBetaRecord = z.infer<typeof energyBetaSchema>;

const MAX_EVENTS = 5000;
const MAX_DELIVERIES = 1000;
const MAX_DELETED_TOKENS = 20_000;
const SAVE_DEBOUNCE_MS = 20;

export function emptyState(): SandboxState {
  return {
    version: 1,
    journalGeneration: 0,
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
    live: null,
    bulkOperators: { count: 0, batches: [] },
    recordEdits: {},
    energyBeta: {},
  };
}

/** One change in the journal. A line of the journal is one save: `{"ops": [...]}`, applied all or nothing. */
type JournalOp =
  | { op: "set"; f: string; v: unknown }
  | { op: "put"; c: CollectionName; k: string; v: unknown }
  | { op: "del"; c: CollectionName; k: string }
  | { op: "append"; c: "events" | "deliveries"; v: unknown };

/** The journal is folded into a new snapshot once it is larger than the snapshot, and never below this size. */
export const MIN_COMPACTION_BYTES = 4 * 1024 * 1024;

/** What GET /_sandbox/persistence reports (decision 42): how much the store wrote, so tests count bytes, not time. */
export interface PersistenceStats {
  snapshotBytes: number;
  journalBytes: number;
  generation: number;
  /** Bytes written since the sandbox started: journal lines, snapshots and journal headers. */
  bytesWritten: number;
  journalAppends: number;
  compactions: number;
}

const RECORD_KEY_SEPARATOR = "\u0000";

function applyOps(state: Record<string, unknown>, ops: JournalOp[]): void {
  for (const entry of ops) {
    switch (entry.op) {
      case "set":
        state[entry.f] = entry.v;
        break;
      case "put":
        (state[entry.c] as Record<string, unknown>)[entry.k] = entry.v;
        break;
      case "del":
        delete (state[entry.c] as Record<string, unknown>)[entry.k];
        break;
      case "append": {
        const log = state[entry.c] as unknown[];
        log.push(entry.v);
        const cap = entry.c === "events" ? MAX_EVENTS : MAX_DELIVERIES;
        if (log.length > cap) log.splice(0, log.length - cap);
        break;
      }
    }
  }
}

function isMissing(error: unknown): boolean {
  return error instanceof Error && "code" in error && error.code === "ENOENT";
}

/** Writes `text` to `file` so that a crash leaves the old file or the new one, never half of one: temp, fsync, rename. */
async function writeAtomically(file: string, text: string): Promise<number> {
  const temp = `${file}.tmp-${process.pid}`;
  const handle = await open(temp, "w", 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, file);
  return Buffer.byteLength(text);
}

export class SandboxStore {
  private saveTimer: NodeJS.Timeout | null = null;
  private saving: Promise<void> = Promise.resolve();
  /** The state as plain data (what gets serialized); `state` is the same object seen through the change tracker. */
  private raw: SandboxState;
  private tracked: SandboxState;
  /** Records and fields changed since the last save ("f:<field>" or "c:<collection>\0<key>"). */
  private readonly dirty = new Set<string>();
  private appended: JournalOp[] = [];
  /** A change the journal cannot express (the state was replaced): the next save writes a snapshot. */
  private snapshotDue = false;
  private readonly stats: PersistenceStats = { snapshotBytes: 0, journalBytes: 0, generation: 0, bytesWritten: 0, journalAppends: 0, compactions: 0 };

  // Indexes, so that no request scans every install or token (10,000 bulk installs, decision 41).
  private installIndex = new Map<number, number>();
  private installsOfOperator = new Map<number, number[]>();
  private consumerIndex = new Map<string, number>();
  private tokensOfChainIndex = new Map<string, Set<string>>();
  private tokensOfInstallIndex = new Map<number, Set<string>>();
  private chainsOfInstallIndex = new Map<number, Set<string>>();

  private constructor(
    readonly file: string,
    readonly journalFile: string,
    state: SandboxState,
    private readonly log: (line: string) => void,
  ) {
    this.raw = state;
    this.tracked = this.track(state);
    this.rebuildIndexes();
  }

  /** The state. Write to it freely: the store notes which records changed and saves them (call changed() after). */
  get state(): SandboxState {
    return this.tracked;
  }

  /**
   * Loads the snapshot (state.json) and replays the journal written after it, or starts empty. A journal line cut
   * short by a crash is ignored (each line is one whole save, so the state stays consistent); a snapshot that does not
   * parse is set aside, not lost. Anything replayed is folded into a fresh snapshot at once.
   */
  static async open(dataDir: string, log: (line: string) => void): Promise<SandboxStore> {
    await mkdir(dataDir, { recursive: true });
    const file = path.join(dataDir, "state.json");
    const journalFile = path.join(dataDir, "journal.jsonl");
    const readText = async (name: string): Promise<string | null> => {
      try {
        return await readFile(name, "utf8");
      } catch (error) {
        if (isMissing(error)) return null;
        throw error;
      }
    };
    const raw = await readText(file);
    let snapshot: unknown = emptyState();
    if (raw !== null) {
      try {
        snapshot = JSON.parse(raw);
      } catch {
        snapshot = null;
      }
    }
    const parsed = stateSchema.safeParse(snapshot);
    if (!parsed.success) {
      const aside = `${file}.unreadable-${Date.now()}`;
      await rename(file, aside);
      log(`state file did not match the expected shape; moved it to ${aside} and started empty`);
      const store = new SandboxStore(file, journalFile, emptyState(), log);
      await store.compact();
      return store;
    }

    let state = parsed.data;
    const journal = await readText(journalFile);
    let replayed = 0;
    let torn = false;
    if (journal !== null) {
      const lines = journal.split("\n");
      const header = safeJson(lines[0] ?? "") as { generation?: unknown } | undefined;
      if (header?.generation === state.journalGeneration) {
        const replay = structuredClone(state) as unknown as Record<string, unknown>;
        for (const line of lines.slice(1)) {
          if (line === "") continue;
          const batch = safeJson(line) as { ops?: JournalOp[] } | undefined;
          if (!batch || !Array.isArray(batch.ops)) {
            torn = true; // a save cut short by a crash: it and anything after it never completed
            break;
          }
          applyOps(replay, batch.ops);
          replayed += 1;
        }
        const checked = stateSchema.safeParse(replay);
        if (checked.success) state = checked.data;
        else log(`journal did not replay to a valid state (${checked.error.issues[0]?.message ?? "?"}); kept the snapshot only`);
      }
    }
    const store = new SandboxStore(file, journalFile, state, log);
    store.stats.snapshotBytes = raw === null ? 0 : Buffer.byteLength(raw);
    store.stats.generation = state.journalGeneration;
    if (torn) log(`journal ended with an incomplete save (a crash while writing); it was ignored, ${replayed} complete save(s) replayed`);
    // A fresh snapshot and an empty journal of its generation: nothing replayed twice, nothing appended after a torn line.
    await store.compact();
    return store;
  }

  /** Call after every mutation: schedules a debounced save of what changed. */
  changed(): void {
    if (this.saveTimer) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = null;
      void this.saveNow();
    }, SAVE_DEBOUNCE_MS);
  }

  /** Writes pending changes now; resolves when they are on disk. */
  async flush(): Promise<void> {
    if (this.saveTimer) {
      clearTimeout(this.saveTimer);
      this.saveTimer = null;
      await this.saveNow();
    }
    await this.saving;
  }

  /** At shutdown: pending changes, then the journal folded into a snapshot, so the next start reads one file. */
  async close(): Promise<void> {
    await this.flush();
    this.saving = this.saving.then(() => this.compact());
    await this.saving;
  }

  persistenceStats(): PersistenceStats {
    return { ...this.stats };
  }

  private saveNow(): Promise<void> {
    // Saves are chained so two writes never race on the files.
    this.saving = this.saving.then(async () => {
      try {
        if (this.snapshotDue || this.stats.journalBytes > Math.max(MIN_COMPACTION_BYTES, this.stats.snapshotBytes)) {
          await this.compact();
        } else {
          await this.appendChanges();
          if (this.stats.journalBytes > Math.max(MIN_COMPACTION_BYTES, this.stats.snapshotBytes)) await this.compact();
        }
      } catch (error) {
        this.log(`could not save state: ${error instanceof Error ? error.message : String(error)}`);
      }
    });
    return this.saving;
  }

  /** One journal line: the current value of every record changed since the last save, and the log entries appended. */
  private async appendChanges(): Promise<void> {
    if (this.dirty.size === 0 && this.appended.length === 0) return;
    const ops: JournalOp[] = [];
    const raw = this.raw as unknown as Record<string, Record<string, unknown>>;
    for (const mark of this.dirty) {
      if (mark.startsWith("f:")) {
        const field = mark.slice(2);
        ops.push({ op: "set", f: field, v: raw[field] });
        continue;
      }
      const [collection, key] = mark.slice(2).split(RECORD_KEY_SEPARATOR) as [CollectionName, string];
      const value = raw[collection]?.[key];
      ops.push(value === undefined ? { op: "del", c: collection, k: key } : { op: "put", c: collection, k: key, v: value });
    }
    ops.push(...this.appended);
    this.dirty.clear();
    this.appended = [];
    const line = `${JSON.stringify({ ops })}\n`;
    const handle = await open(this.journalFile, "a", 0o600);
    try {
      await handle.writeFile(line);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    const bytes = Buffer.byteLength(line);
    this.stats.journalBytes += bytes;
    this.stats.bytesWritten += bytes;
    this.stats.journalAppends += 1;
  }

  /**
   * A new snapshot of the next generation, then an empty journal of that generation. A crash between the two leaves
   * the new snapshot with the old journal, whose generation no longer matches: it is ignored, and nothing is lost,
   * since the snapshot already holds everything it said.
   */
  private async compact(): Promise<void> {
    this.dirty.clear();
    this.appended = [];
    this.snapshotDue = false;
    this.raw.journalGeneration += 1;
    const snapshotBytes = await writeAtomically(this.file, `${JSON.stringify(this.raw)}\n`);
    const header = `${JSON.stringify({ generation: this.raw.journalGeneration })}\n`;
    const headerBytes = await writeAtomically(this.journalFile, header);
    Object.assign(this.stats, {
      snapshotBytes,
      journalBytes: headerBytes,
      generation: this.raw.journalGeneration,
      bytesWritten: this.stats.bytesWritten + snapshotBytes + headerBytes,
      compactions: this.stats.compactions + 1,
    });
  }

  replaceState(next: SandboxState): void {
    next.journalGeneration = this.raw.journalGeneration;
    this.raw = next;
    this.tracked = this.track(next);
    this.rebuildIndexes();
    this.snapshotDue = true;
    this.changed();
  }

  private track(state: SandboxState): SandboxState {
    const sink: ChangeSink = {
      field: (name) => {
        this.dirty.add(`f:${name}`);
      },
      record: (collection, key, value, previous) => {
        this.dirty.add(`c:${collection}${RECORD_KEY_SEPARATOR}${key}`);
        this.reindex(collection, key, value, previous);
      },
      everything: () => {
        this.snapshotDue = true;
      },
    };
    return trackChanges(state, sink);
  }

  // ----- indexes -----------------------------------------------------------------------------------------------

  private rebuildIndexes(): void {
    this.installIndex = new Map();
    this.installsOfOperator = new Map();
    this.consumerIndex = new Map();
    this.tokensOfChainIndex = new Map();
    this.tokensOfInstallIndex = new Map();
    this.chainsOfInstallIndex = new Map();
    this.raw.installs.forEach((install, index) => this.indexInstall(install, index));
    this.raw.consumers.forEach((consumer, index) => this.consumerIndex.set(consumer.id, index));
    for (const [hash, token] of Object.entries(this.raw.tokens)) this.indexToken(hash, token);
    for (const [chainId, chain] of Object.entries(this.raw.chains)) addTo(this.chainsOfInstallIndex, chain.installId, chainId);
  }

  private indexInstall(install: InstallRecord, index: number): void {
    this.installIndex.set(install.installId, index);
    const list = this.installsOfOperator.get(install.operatorId);
    if (list) list.push(install.installId);
    else this.installsOfOperator.set(install.operatorId, [install.installId]);
  }

  private indexToken(hash: string, token: TokenRecord): void {
    addTo(this.tokensOfChainIndex, token.chainId, hash);
    addTo(this.tokensOfInstallIndex, token.installId, hash);
  }

  /** Keeps the indexes right when a record is written or deleted through `state`. */
  private reindex(collection: CollectionName, key: string, value: unknown, previous: unknown): void {
    if (collection === "tokens") {
      if (previous !== undefined && previous !== value) {
        const old = previous as TokenRecord;
        this.tokensOfChainIndex.get(old.chainId)?.delete(key);
        this.tokensOfInstallIndex.get(old.installId)?.delete(key);
      }
      if (value !== undefined) this.indexToken(key, value as TokenRecord);
    } else if (collection === "chains" && value !== undefined) {
      addTo(this.chainsOfInstallIndex, (value as ChainRecord).installId, key);
    } else if (collection === "installs" && value !== undefined && previous === undefined) {
      this.indexInstall(value as InstallRecord, Number(key));
    } else if (collection === "consumers" && value !== undefined && previous === undefined) {
      this.consumerIndex.set((value as ConsumerRecord).id, Number(key));
    }
  }

  /** Hashes and records of the chain's tokens (no scan over every token). */
  tokensOfChain(chainId: string): [string, TokenRecord][] {
    return [...(this.tokensOfChainIndex.get(chainId) ?? [])].flatMap((hash) => {
      const token = this.state.tokens[hash];
      return token ? [[hash, token] as [string, TokenRecord]] : [];
    });
  }

  tokensOfInstall(installId: number): [string, TokenRecord][] {
    return [...(this.tokensOfInstallIndex.get(installId) ?? [])].flatMap((hash) => {
      const token = this.state.tokens[hash];
      return token ? [[hash, token] as [string, TokenRecord]] : [];
    });
  }

  /** The install's newest chain that is not revoked, with its id (the shared-grant switch, README decision 54). */
  liveChainOfInstall(installId: number): { chainId: string; chain: ChainRecord } | undefined {
    let newest: { chainId: string; chain: ChainRecord } | undefined;
    for (const chainId of this.chainsOfInstallIndex.get(installId) ?? []) {
      const chain = this.state.chains[chainId];
      if (!chain || chain.revokedAtMs !== null) continue;
      if (!newest || chain.createdAtMs >= newest.chain.createdAtMs) newest = { chainId, chain };
    }
    return newest;
  }

  chainsOfInstall(installId: number): ChainRecord[] {
    return [...(this.chainsOfInstallIndex.get(installId) ?? [])].flatMap((id) => {
      const chain = this.state.chains[id];
      return chain ? [chain] : [];
    });
  }

  /** Adds a new install and its consumer (the only way installs are created: the indexes follow). */
  addInstall(install: InstallRecord, consumer: ConsumerRecord): void {
    this.state.installs.push(install);
    this.state.consumers.push(consumer);
    this.changed();
  }

  /** Appends to the event log. Callers must never pass tokens, codes or secrets in `detail`. */
  addEvent(type: EventType, at: Date, detail: Record<string, EventValue>): EventRecord {
    const event: EventRecord = { seq: this.raw.nextEventSeq, at: at.toISOString(), type, detail };
    this.state.nextEventSeq += 1;
    this.raw.events.push(event);
    if (this.raw.events.length > MAX_EVENTS) this.raw.events.splice(0, this.raw.events.length - MAX_EVENTS);
    this.appended.push({ op: "append", c: "events", v: event });
    this.changed();
    return event;
  }

  /** Keeps a created webhook delivery for replay (the newest 1,000). */
  addDelivery(delivery: DeliveryRecord): void {
    this.raw.deliveries.push(delivery);
    if (this.raw.deliveries.length > MAX_DELIVERIES) this.raw.deliveries.splice(0, this.raw.deliveries.length - MAX_DELIVERIES);
    this.appended.push({ op: "append", c: "deliveries", v: delivery });
    this.changed();
  }

  findDelivery(id: string): DeliveryRecord | undefined {
    return this.raw.deliveries.find((d) => d.id === id);
  }

  /** The install's token-endpoint counters, created on first use. */
  tokenStatsOf(installId: number): TokenStatsRecord {
    const key = String(installId);
    let stats = this.state.tokenStats[key];
    if (!stats) {
      this.state.tokenStats[key] = { authorizationCodeCalls: 0, refreshTokenCalls: 0, refreshesIssued: 0, chainRevocations: 0 };
      stats = this.state.tokenStats[key]!;
    }
    return stats;
  }

  findActiveInstall(operatorId: number, clientId: string): InstallRecord | undefined {
    for (const installId of this.installsOfOperator.get(operatorId) ?? []) {
      const install = this.findInstall(installId);
      if (install && install.clientId === clientId && install.status === "active") return install;
    }
    return undefined;
  }

  findInstall(installId: number): InstallRecord | undefined {
    const index = this.installIndex.get(installId);
    return index === undefined ? undefined : this.state.installs[index];
  }

  findConsumer(consumerId: string): ConsumerRecord | undefined {
    const index = this.consumerIndex.get(consumerId);
    return index === undefined ? undefined : this.state.consumers[index];
  }

  /** Deletes one token, remembering only which install it belonged to (for token-stats attribution). */
  deleteToken(hash: string): void {
    const token = this.state.tokens[hash];
    if (!token) return;
    const installId = token.installId;
    delete this.state.tokens[hash];
    this.rememberDeleted(hash, installId);
    this.changed();
  }

  /** The install of a deleted token, if it is remembered. */
  installOfDeletedToken(hash: string): number | undefined {
    return this.raw.deletedTokenInstalls[hash];
  }

  private rememberDeleted(hash: string, installId: number): void {
    const remembered = this.state.deletedTokenInstalls;
    remembered[hash] = installId;
    const keys = Object.keys(this.raw.deletedTokenInstalls);
    for (let i = 0; i < keys.length - MAX_DELETED_TOKENS; i += 1) {
      const key = keys[i];
      if (key !== undefined) delete remembered[key];
    }
  }

  /** Deletes every token of the install (what revoking a consent does in Hydra). Returns how many went. */
  deleteTokensOfInstall(installId: number): number {
    let removed = 0;
    for (const [hash] of this.tokensOfInstall(installId)) {
      delete this.state.tokens[hash];
      this.rememberDeleted(hash, installId);
      removed += 1;
    }
    this.changed();
    return removed;
  }
}

function addTo<K>(index: Map<K, Set<string>>, key: K, value: string): void {
  const set = index.get(key);
  if (set) set.add(value);
  else index.set(key, new Set([value]));
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
