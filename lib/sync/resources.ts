// The registry of synced resources: the one list of what the app copies from the service. Each entry
// is a declaration (./resource.ts) in its own file; everything that lists resources derives from this
// array, so a fork adds a resource with a file and a line here (`npm run new:resource` writes both),
// and removes one by deleting them:
//   - the sync runs them in this order (./index.ts);
//   - retention purges their tables (./retention.ts);
//   - the dashboard asks how fresh each copy is (lib/dashboard/freshness.ts);
//   - the console shows each one's sync status (lib/admin/timeline.ts);
//   - the operator reads their scopes in words (lib/installs/scope-words.ts).
// The dashboard's pages are a registry of their own (app/dashboard/sections.ts): a resource need not
// have a page, and a page need not read a synced resource.
import "server-only";
import { grantsResource } from "@/lib/installs/scopes";
import { chargePoints } from "./charge-points";
import { charges } from "./charges";
import type { SyncResource, SyncedRow } from "./resource";
import { teams } from "./teams";

/** In this order: the short lists first, so a run cut short still leaves them fresh. */
const REGISTERED = [teams, chargePoints, charges] as const;

/** A registered resource's name (its key in sync_checkpoints and sync_runs). */
export type ResourceName = (typeof REGISTERED)[number]["name"];

/** The registry as the engine reads it: each row type is the resource's own business. */
export const SYNCED_RESOURCES: readonly SyncResource<SyncedRow, ResourceName>[] = REGISTERED as unknown as SyncResource<SyncedRow, ResourceName>[];

/** The resource of that name; undefined for a name no longer registered (an old sync_runs row). */
export function findSyncedResource(name: string): SyncResource<SyncedRow, ResourceName> | undefined {
  return SYNCED_RESOURCES.find((resource) => resource.name === name);
}

/**
 * Whether the app has (or will have) a copy of the resource for this grant: it is registered and the
 * operator shared it. A page of a resource not shared says so and never waits for a copy.
 */
export function resourceShared(name: string, grantedScopes: readonly string[]): boolean {
  const resource = findSyncedResource(name);
  return resource !== undefined && grantsResource(grantedScopes, resource.scopeResource);
}
