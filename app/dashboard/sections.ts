// The dashboard's sections: the one list of its pages, in the order the nav shows them. The nav
// (./nav.tsx) and the Overview's links to the other sections derive from it, and so do the tests that
// walk every page.
//
// Each section is its folder under app/dashboard/ plus its entry here. The folder holds the route
// (page, loading and error states), its components and its own tests (`_tests/`: a private folder,
// never a route; `npm test` finds them). Its data comes from one lib/ read, as every page's does.
// Removing a section is deleting its folder and its entry; adding one is the reverse
// (`npm run new:resource` writes both for a synced resource's page).
//
// Not server-only: the nav is a client component (it marks the current page).

import type { Locale } from "@/lib/i18n/locales";
import type { MessageKey } from "@/lib/i18n/messages";
import type { ResourceName } from "@/lib/sync/resources";

export type DashboardSection = {
  /** The section's page: its folder under app/dashboard/. */
  href: `/dashboard/${string}`;
  /** Its name in the nav and in links, in English. */
  label: string;
  /**
   * Its name in the core catalogue (messages/*.json), for the nav in the operator's language. An
   * optional section has none (the catalogue must not name it, so that deleting its folder leaves
   * nothing behind): its name in other languages is in its own entry (`labels`).
   */
  messageKey?: MessageKey;
  /** An optional section's name in the other shipped languages; English is `label`. */
  labels?: Partial<Record<Locale, string>>;
  /**
   * Nothing outside its folder and this entry refers to it, so removing both removes it cleanly
   * (tests/unit/dashboard-sections.test.ts checks it). The core sections are linked from other pages.
   */
  optional?: true;
  /**
   * The synced resource it lists, with each record at `<href>/<record id>`: how another page links to
   * that list or a record (sectionListing) without naming the section, so that it can go.
   */
  lists?: ResourceName;
};

export const DASHBOARD_SECTIONS = [
  // The synced resources the operator reads (lib/sync/resources.ts).
  { href: "/dashboard/charge-points", label: "Charge points", messageKey: "nav.chargePoints" },
  // Optional: the charging sessions (charges) the sync copies; the Overview reads them itself.
  { href: "/dashboard/sessions", label: "Sessions", optional: true, labels: { nb: "Ladeøkter" }, lists: "charges" },
  // Optional: the teams write's worked example (DASHBOARD_MANAGE_TEAMS) over the synced teams.
  { href: "/dashboard/teams", label: "Teams", optional: true, labels: { nb: "Team" } },
  // Optional: the beta EVSE charge history, read live (contract §4.3).
  { href: "/dashboard/energy", label: "Energy", optional: true, labels: { nb: "Energi" } },
  // The install's details: its id, what the operator allowed, the settings they chose in the portal.
  // A section like the others, so that it is in the nav on every screen, last.
  { href: "/dashboard/settings", label: "Settings and access", messageKey: "nav.settings" },
] as const satisfies readonly DashboardSection[];

/** The section that lists a synced resource; undefined when the dashboard has none (a fork removed it). */
export function sectionListing(resource: ResourceName): DashboardSection | undefined {
  return (DASHBOARD_SECTIONS as readonly DashboardSection[]).find((section) => section.lists === resource);
}

/** The Overview, first in the nav: the dashboard's home, not a section of its own. */
export const OVERVIEW = { href: "/dashboard", label: "Overview", messageKey: "nav.overview" } as const satisfies {
  href: string;
  label: string;
  messageKey: MessageKey;
};

/** A section's name in the operator's language (its English label when the catalogue has none for it). */
export function sectionLabel(
  section: { label: string; messageKey?: MessageKey; labels?: Partial<Record<Locale, string>> },
  t: ((key: MessageKey) => string) & { locale: Locale },
): string {
  return section.messageKey ? t(section.messageKey) : (section.labels?.[t.locale] ?? section.label);
}
