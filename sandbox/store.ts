// Sandbox state and its persistence. Everything that changes (installs, consumers, tokens, codes, consent
// requests, the clock offset, the event log) lives in one object, saved atomically to
// ${SANDBOX_DATA_DIR}/state.json (write a temp file, then rename) shortly after each mutation.
// Tokens, codes, tickets and consent challenges are stored as sha256 hashes, never in clear.
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";

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
});

export type InstallRecord = z.infer<typeof installSchema>;
export type ConsumerRecord = z.infer<typeof consumerSchema>;
export type TokenRecord = z.infer<typeof tokenSchema>;
export type CodeRecord = z.infer<typeof codeSchema>;
export type AuthTicketRecord = z.infer<typeof authTicketSchema>;
export type ConsentRequestRecord = z.infer<typeof consentRequestSchema>;
export type EventValue = z.infer<typeof eventValueSchema>;
export type EventRecord = z.infer<typeof eventSchema>;
export type SandboxState = z.infer<typeof stateSchema>;

const MAX_EVENTS = 5000;
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

  findActiveInstall(operatorId: number, clientId: string): InstallRecord | undefined {
    return this.state.installs.find((i) => i.operatorId === operatorId && i.clientId === clientId && i.status === "active");
  }

  findInstall(installId: number): InstallRecord | undefined {
    return this.state.installs.find((i) => i.installId === installId);
  }

  findConsumer(consumerId: string): ConsumerRecord | undefined {
    return this.state.consumers.find((c) => c.id === consumerId);
  }

  /** Deletes every token of the install (what revoking a consent does in Hydra). Returns how many went. */
  deleteTokensOfInstall(installId: number): number {
    let removed = 0;
    for (const [hash, token] of Object.entries(this.state.tokens)) {
      if (token.installId === installId) {
        delete this.state.tokens[hash];
        removed += 1;
      }
    }
    this.changed();
    return removed;
  }
}
