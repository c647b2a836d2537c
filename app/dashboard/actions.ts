"use server";
// Server actions of the operator dashboard. Each is a public endpoint: it checks its caller first.
import { revalidatePath } from "next/cache";
import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { currentOperator } from "@/lib/auth/operator-session";
import { secureCookies } from "@/lib/auth/options";
import { formOf } from "@/lib/http/server-action-body";
import { acceptedTimeZones } from "@/lib/i18n/database-zones";
import { DISPLAY_COOKIE_MAX_AGE, LOCALE_COOKIE, ZONE_COOKIE, parseDisplaySettings } from "@/lib/i18n/settings";
import { checkReauthorizationNow, recordReauthRequested } from "@/lib/installs/reauth";

/** The banner's "Review and approve": note that the operator is leaving to re-consent, then go. */
export async function startReauthorizationAction(): Promise<void> {
  const operator = await currentOperator();
  if (!operator) redirect("/dashboard");
  const reauthUrl = await recordReauthRequested(operator.installRowId);
  // Nothing to follow (no longer flagged, or a link that is not the service's): show the current state.
  if (!reauthUrl) revalidatePath("/dashboard", "layout");
  redirect(reauthUrl ?? "/dashboard");
}

/**
 * The banner's "I've already approved it": the operator re-consented somewhere the app could not
 * see (the portal, a support link): one probe now (rate-limited in lib/installs/reauth.ts).
 */
export async function checkReauthorizationAction(): Promise<void> {
  const operator = await currentOperator();
  if (!operator) redirect("/dashboard");
  await checkReauthorizationNow(operator.installRowId);
  // The install's state lives in the dashboard layout, which a plain redirect to the same page would
  // keep as it is on the client: re-render from the layout down.
  revalidatePath("/dashboard", "layout");
  redirect("/dashboard");
}

/**
 * "Settings and access" → "Language and time zone": the operator's own choice, first in the order the
 * dashboard picks its language and zone in (docs/spec-gaps.md A151). Kept in two cookies of this
 * browser (A152: a language is a person's), httpOnly (no script needs them; the server reads them)
 * and SameSite=Lax like the session. "Automatic" removes a choice. A value that is not a shipped
 * language or a real IANA zone, or a zone the database reads otherwise (lib/i18n/database-zones.ts),
 * changes nothing and the page says so: the form is a stranger's input.
 */
export async function saveDisplaySettingsAction(form: FormData): Promise<void> {
  const operator = await currentOperator();
  if (!operator) redirect("/dashboard");
  const posted = formOf(form);
  const zone = posted.get("timeZone");
  const accepted = await acceptedTimeZones([typeof zone === "string" ? zone : null]);
  const parsed = parseDisplaySettings(posted, (value) => accepted.has(value));
  if (!parsed.ok) redirect(`/dashboard/settings?display=${{ locale: "bad-locale", timeZone: "bad-zone", unsupportedZone: "unsupported-zone" }[parsed.field]}#display`);

  const jar = await cookies();
  const options = { httpOnly: true, sameSite: "lax" as const, path: "/", secure: secureCookies(), maxAge: DISPLAY_COOKIE_MAX_AGE };
  for (const [name, value] of [
    [LOCALE_COOKIE, parsed.settings.locale],
    [ZONE_COOKIE, parsed.settings.timeZone],
  ] as const) {
    if (value === null) jar.delete(name);
    else jar.set(name, value, options);
  }
  // Every page's words and times change: re-render from the layout down.
  revalidatePath("/dashboard", "layout");
  redirect("/dashboard/settings?display=saved#display");
}
