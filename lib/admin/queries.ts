// Reads for the staff console (/admin). Console pages call these; they never query the database
// themselves, and they call requireStaff() before calling any of these.
//
// Every query names its columns (`select`). The token ciphertext columns are never among them: the
// Prisma client leaves them out by default (lib/db/client.ts) and only lib/oauth/token-vault.ts asks
// for them. Staff see when tokens expire, never the tokens.
import "server-only";
import { readTokenCircuit, type TokenCircuitState } from "@/lib/oauth/circuit";
import { readCodeRefusalAlarm, type CodeRefusalAlarm } from "@/lib/installs/code-claims";
import { CODE_REFUSAL_FAILURES } from "@/lib/installs/connect";
import { db } from "@/lib/db/client";
import type { InstallStatus } from "@/lib/db/generated/enums";

export const INSTALL_STATUSES = ["ACTIVE", "NEEDS_REAUTH", "REINSTALL_NEEDED", "REVOKED"] as const satisfies readonly InstallStatus[];


// What the console shows of a token grant: its timing, not its tokens.
const grantTiming = {
  accessTokenExpiresAt: true,
  refreshTokenExpiresAt: true,
  refreshStartedAt: true,
  lastRefreshedAt: true,
} as const;

const installRow = {
  id: true,
  installId: true,
  operatorId: true,
  slug: true,
  status: true,
  grantedScopes: true,
  createdAt: true,
  grant: { select: grantTiming },
} as const;

export type GrantTiming = {
  accessTokenExpiresAt: Date;
  refreshTokenExpiresAt: Date | null;
  /** Not null: a refresh was sent and its outcome never recorded (lib/oauth/refresh.ts). */
  refreshStartedAt: Date | null;
  lastRefreshedAt: Date | null;
};

export type InstallRow = {
  id: string;
  installId: number | null;
  operatorId: string;
  slug: string | null;
  status: InstallStatus;
  grantedScopes: string[];
  createdAt: Date;
  grant: GrantTiming | null;
};

export type InstallDetail = InstallRow & {
  /** As the service states it (lib/installs/identity.ts); null until it does. */
  operatorName: string | null;
  clientId: string;
  config: unknown;
  reauthUrl: string | null;
  statusChangedAt: Date;
  revokedAt: Date | null;
  updatedAt: Date;
  grant: (GrantTiming & { scope: string; version: number }) | null;
  asOf: Date;
};

/** One install (by its row id), or null. Its history is lib/admin/timeline.ts's. */
export async function fetchInstallDetail(installRowId: string): Promise<InstallDetail | null> {
  const install = await db().install.findUnique({
    where: { id: installRowId },
    select: {
      ...installRow,
      operatorName: true,
      clientId: true,
      config: true,
      reauthUrl: true,
      statusChangedAt: true,
      revokedAt: true,
      updatedAt: true,
      grant: { select: { ...grantTiming, scope: true, version: true } },
    },
  });
  if (!install) return null;
  return { ...install, asOf: new Date() };
}

/**
 * The row id of the install the service numbers `installId` (unique: a re-install gets a new
 * install_id, contract §2 "Install"), or null. Staff often hold the service's number (from an operator, a
 * webhook, the service's own tools), while the console's addresses use the row id.
 */
export async function findInstallRowId(installId: number): Promise<string | null> {
  const install = await db().install.findUnique({ where: { installId }, select: { id: true } });
  return install?.id ?? null;
}

export type TokenEndpointCircuit = TokenCircuitState;

/**
 * Whether token requests for this app's client_id are paused because the identity provider
 * answered `invalid_client` (lib/oauth/circuit.ts keeps the circuit; a circuit opened with an
 * older secret no longer counts).
 */
export function fetchTokenEndpointCircuit(): Promise<TokenEndpointCircuit> {
  return readTokenCircuit();
}

/** Whether fresh authorization codes keep being refused (a redirect_uri registration fault, most likely). */
export function fetchCodeRefusalAlarm(): Promise<CodeRefusalAlarm> {
  return readCodeRefusalAlarm(CODE_REFUSAL_FAILURES);
}
