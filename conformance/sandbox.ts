// The run's side of the sandbox: its control API (/_sandbox, sandbox/README.md "Control API") over HTTP only.
// The conformance run imports nothing of the sandbox either: it talks to it as any tool would, so it can judge an
// app against a sandbox started elsewhere (a container, another machine's `npm run sandbox`).

export interface SandboxEvent {
  seq: number;
  at: string;
  type: string;
  detail: Record<string, unknown>;
}

export interface SandboxInstall {
  install_id: number;
  operator_id: number;
  status: string;
  needs_reauth: boolean;
  reauth_url: string | null;
}

export interface TokenStats {
  calls: { authorization_code: number; refresh_token: number };
  refreshes_issued: number;
  chain_revocations: number;
  chain_revoked: boolean;
  chain_revoked_reason: string | null;
}

export interface ApiRequestCounts {
  total: number;
  byStatus: Record<string, number>;
  peakInAnyWindow: number;
  peakWindowSeconds: number;
}

export interface DeliveryAnswer {
  delivery_id: string;
  ok: boolean;
  /** upload_cut: the app closed the connection while the body was being written, before an answer could be read. */
  attempts: { kind: string; status: number | null; error: string | null; latency_ms: number | null; upload_cut?: boolean }[];
}

export class SandboxClient {
  constructor(readonly url: string) {}

  async control<T = unknown>(method: "GET" | "POST" | "PUT" | "DELETE", path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${this.url}/_sandbox${path}`, {
      method,
      headers: body === undefined ? {} : { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`sandbox ${method} /_sandbox${path} answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
    return (await response.json()) as T;
  }

  async health(): Promise<{ issuer: string; apiBase: string }> {
    return this.control("GET", "/health");
  }

  /** The newest event's sequence number: events after it are what a step caused. */
  async mark(): Promise<number> {
    const { events } = await this.control<{ events: SandboxEvent[] }>("GET", "/events");
    return events.at(-1)?.seq ?? 0;
  }

  async events(since: number, query: { type?: string; install_id?: number; handshake?: string } = {}): Promise<SandboxEvent[]> {
    const params = new URLSearchParams({ since: String(since) });
    for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
    return (await this.control<{ events: SandboxEvent[] }>("GET", `/events?${params}`)).events;
  }

  async installs(): Promise<SandboxInstall[]> {
    return (await this.control<{ installs: SandboxInstall[] }>("GET", "/installs")).installs;
  }

  async operators(): Promise<{ id: number; name: string; chargePointCount: number; chargeCount: number }[]> {
    return (await this.control<{ operators: { id: number; name: string; chargePointCount: number; chargeCount: number }[] }>("GET", "/operators")).operators;
  }

  tokenStats(installId: number): Promise<TokenStats> {
    return this.control("GET", `/installs/${installId}/token-stats`);
  }

  apiRequests(installId: number): Promise<ApiRequestCounts> {
    return this.control("GET", `/installs/${installId}/api-requests`);
  }

  async advanceClock(seconds: number): Promise<void> {
    await this.control("POST", "/clock/advance", { seconds });
  }

  async revoke(installId: number): Promise<void> {
    await this.control("POST", `/installs/${installId}/revoke`);
  }

  craft(delivery: { type: string; data: Record<string, unknown>; signature?: "valid" | "forged" | "missing"; deliveredAtOffsetSeconds?: number; padBytes?: number }): Promise<DeliveryAnswer> {
    return this.control("POST", "/webhooks/craft", delivery);
  }
}

/** Every event of one kind since a mark, optionally for one install. */
export const ofType = (events: SandboxEvent[], type: string) => events.filter((e) => e.type === type);

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** "200×3, 401×1": a tally of statuses, for evidence. */
export function tally(values: unknown[]): string {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(String(value ?? "no answer"), (counts.get(String(value ?? "no answer")) ?? 0) + 1);
  return counts.size ? [...counts].map(([value, count]) => `${value}×${count}`).join(", ") : "none";
}
