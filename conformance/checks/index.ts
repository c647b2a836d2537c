// Every check, in the order a run makes them. Whole-run checks come after the rest (they judge everything the run
// caused), and invalid_client last of all: an app that keeps that obligation sends no token request again until its
// configuration changes, so nothing after it could install.
import type { Check } from "./check";
import { installChecks } from "./install";
import { rateChecks } from "./rate-budget";
import { reauthChecks } from "./reauth";
import { lastChecks, tokenChecks } from "./tokens";
import { uninstallChecks } from "./uninstall";
import { webhookChecks } from "./webhooks";
import { wholeRunChecks } from "./whole-run";

export type { Check };
export const CHECKS: Check[] = [...installChecks, ...tokenChecks, ...webhookChecks, ...reauthChecks, ...rateChecks, ...uninstallChecks, ...wholeRunChecks, ...lastChecks];
