// What every route module of the sandbox receives: configuration, clock, state, seed data and webhooks.
import type { AlertSink } from "./alert-sink.js";
import type { RateBudgets } from "./api/budget.js";
import type { ApiRequestCounters } from "./api/counters.js";
import type { ApiFaults } from "./api/faults.js";
import type { SandboxClock } from "./clock.js";
import type { SandboxConfig } from "./config.js";
import type { TokenEndpointFaults } from "./faults.js";
import type { IdpBehaviour } from "./idp/behaviour.js";
import type { OperatorDirectory } from "./operators.js";
import type { OperatorData } from "./seed.js";
import type { SandboxStore } from "./store.js";
import type { WebhookSender } from "./webhooks.js";

export interface SandboxContext {
  config: SandboxConfig;
  clock: SandboxClock;
  store: SandboxStore;
  /** Every operator and its records as the API shows them at the current clock (operators.ts). */
  operators: OperatorDirectory;
  webhooks: WebhookSender;
  /** Public origin without trailing slash; known once the server listens when the port is 0. */
  publicUrl(): string;
  /** `${publicUrl}/idp`, exactly as discovery advertises it. */
  issuer(): string;
  log(line: string): void;
  /** Hashes of refresh tokens being rotated right now (never persisted): fosite's serialization failure. */
  refreshesInFlight: Set<string>;
  /** The most refreshes in flight at once since the last reset (token statistics; in memory only). */
  refreshesInFlightPeak: { value: number };
  /** Armed token-endpoint faults (in memory only). */
  faults: TokenEndpointFaults;
  /** Each install's budget (default and overrides) and its fixed window on the sandbox clock (in memory only). */
  rateBudgets: RateBudgets;
  /** Armed partner-API faults, and the requests they hold (in memory only). */
  apiFaults: ApiFaults;
  /** Partner-API request counters per install (in memory only). */
  apiRequests: ApiRequestCounters;
  /**
   * Whether GET /consumers/me carries the extra `installId` field (the public reference does not
   * document one). Tests switch it off to play a service that does not send it (in memory only).
   */
  consumerInstallId: { include: boolean };
  /** How far the identity provider departs from Hydra (idp/behaviour.ts; in memory only). */
  idpBehaviour: IdpBehaviour;
  /**
   * Another origin for the reauth_url of NEEDS_REAUTH answers (null: the sandbox's own), so tests can
   * play a service answer that points elsewhere, which the app must not follow (in memory only).
   */
  reauthUrlOrigin: { value: string | null };
  /** The app's alerts as received (decisions 50-51; in memory only). */
  alertSink: AlertSink;
}

/** The operator's records as the API shows them now (seed, live data, edits). */
export function findOperator(ctx: SandboxContext, operatorId: number): OperatorData | undefined {
  return ctx.operators.find(operatorId);
}
