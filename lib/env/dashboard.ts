// The operator dashboard's optional features (README "Teams and Energy").
//
// One concern's part of the configuration schema; lib/env.ts merges every part into the one schema
// validated at start-up, so each variable is still checked, and reported, in one place.
import "server-only";
import { z } from "zod";

export const dashboardShape = {
  /**
   * "Manage teams" (rename a team from the dashboard). Off as shipped: the app requests the narrowest
   * scopes (contract §2). On, the app needs `teams:write`: the app owner must also add it to the
   * app's registered scopes at the service, which flags every install for re-consent (contract §3).
   */
  DASHBOARD_MANAGE_TEAMS: z.enum(["on", "off"]).default("off"),
  /**
   * The EVSE charge history (contract §4.3, beta): its method, path and parameter names are not shown,
   * so they live here; the defaults are what the sandbox serves (sandbox/README.md decision 46). The
   * path names its three parameters as {chargePointId}, {evseId} and {connectorId}.
   */
  ENERGY_API_METHOD: z.enum(["GET", "POST"]).default("GET"),
  ENERGY_API_PATH: z
    .string()
    .regex(/^\/[A-Za-z0-9_\-./{}]*$/, "must be a path under /api/v1, e.g. /energy/charge-points/{chargePointId}/evses/{evseId}/connectors/{connectorId}/charges")
    .refine(
      (path) => ["{chargePointId}", "{evseId}", "{connectorId}"].every((name) => path.split(name).length === 2),
      "must name each of {chargePointId}, {evseId} and {connectorId} exactly once",
    )
    .default("/energy/charge-points/{chargePointId}/evses/{evseId}/connectors/{connectorId}/charges"),
  /** Names of the operation's query parameters the app sends: the start and end of the range, and a row limit. */
  ENERGY_API_FROM_PARAM: z.string().regex(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/).default("from"),
  ENERGY_API_TO_PARAM: z.string().regex(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/).default("to"),
  ENERGY_API_LIMIT_PARAM: z.string().regex(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/).default("limit"),
};
