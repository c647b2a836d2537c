// Fault injection for the app's tests (control API: POST/GET/DELETE /_sandbox/faults). In memory only: a restart or
// POST /_sandbox/reset clears it. One fault can be armed at a time; it applies to the next `count` token-endpoint
// calls of its grant type (refresh_token by default), in arrival order, whatever the rest of the request holds.
import { z } from "zod";

export const TOKEN_FAULT_MODES = ["delay", "error500", "drop-connection", "answer-then-fail"] as const;
export type TokenFaultMode = (typeof TOKEN_FAULT_MODES)[number];

export const FAULT_GRANT_TYPES = ["refresh_token", "authorization_code"] as const;
export type FaultGrantType = (typeof FAULT_GRANT_TYPES)[number];

/** Default wait of mode "delay" when delayMs is not given. */
export const DEFAULT_FAULT_DELAY_MS = 1000;

const tokenEndpointFaultSchema = z
  .object({
    mode: z.enum(TOKEN_FAULT_MODES),
    /** How many of the next matching calls are affected. */
    count: z.number().int().min(1).max(100_000).default(1),
    /** Wait before answering (mode "delay": default 1000; the other modes: default 0). */
    delayMs: z.number().int().min(0).max(120_000).optional(),
    /** answer-then-fail only: what replaces the real answer (default error500). */
    failWith: z.enum(["error500", "drop-connection"]).optional(),
    grantType: z.enum(FAULT_GRANT_TYPES).default("refresh_token"),
  })
  .strict()
  .refine((f) => f.failWith === undefined || f.mode === "answer-then-fail", { message: "failWith applies to mode answer-then-fail only", path: ["failWith"] });

export const faultRequestSchema = z.object({ tokenEndpoint: tokenEndpointFaultSchema }).strict();
export type FaultRequest = z.infer<typeof faultRequestSchema>;

/** What one affected call does. */
export interface AppliedTokenFault {
  mode: TokenFaultMode;
  delayMs: number;
  /** For answer-then-fail: how the performed request's answer is replaced. */
  failWith: "error500" | "drop-connection";
}

export interface ArmedTokenFault {
  mode: TokenFaultMode;
  grantType: FaultGrantType;
  remaining: number;
  delayMs: number;
  failWith: "error500" | "drop-connection" | null;
}

export class TokenEndpointFaults {
  private armed: ArmedTokenFault | null = null;

  arm(request: FaultRequest): ArmedTokenFault {
    const f = request.tokenEndpoint;
    this.armed = {
      mode: f.mode,
      grantType: f.grantType,
      remaining: f.count,
      delayMs: f.delayMs ?? (f.mode === "delay" ? DEFAULT_FAULT_DELAY_MS : 0),
      failWith: f.mode === "answer-then-fail" ? (f.failWith ?? "error500") : null,
    };
    return { ...this.armed };
  }

  clear(): void {
    this.armed = null;
  }

  current(): ArmedTokenFault | null {
    return this.armed ? { ...this.armed } : null;
  }

  /** Consumes one use for a call of this grant type, if a fault is armed for it. */
  take(grantType: string | null): AppliedTokenFault | null {
    const armed = this.armed;
    if (!armed || armed.grantType !== grantType) return null;
    armed.remaining -= 1;
    if (armed.remaining <= 0) this.armed = null;
    return { mode: armed.mode, delayMs: armed.delayMs, failWith: armed.failWith ?? "error500" };
  }
}
