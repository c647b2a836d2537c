"use client";
// The dashboard's nav: the Overview, then the sections of the registry (./sections.ts). A client
// component only to mark the current one (usePathname); the links themselves work without JavaScript.
// The links wrap onto a second line on a narrow screen rather than scroll sideways: every section is
// in sight on a phone, with no hidden part to discover by swiping.
import Link from "next/link";
import { usePathname } from "next/navigation";
import { useI18n } from "./_components/i18n";
import { DASHBOARD_SECTIONS, OVERVIEW, sectionLabel, type DashboardSection } from "./sections";

const SECTIONS: readonly (Omit<DashboardSection, "href"> & { href: string })[] = [OVERVIEW, ...DASHBOARD_SECTIONS];

export function DashboardNav() {
  const pathname = usePathname();
  const { t } = useI18n();
  return (
    <nav aria-label={t("nav.label")} className="border-b border-slate-200 pb-2">
      <ul className="-mx-1 flex flex-wrap gap-1 text-sm">
        {SECTIONS.map((section) => {
          const { href } = section;
          const current = href === OVERVIEW.href ? pathname === href : pathname === href || pathname.startsWith(`${href}/`);
          return (
            <li key={href}>
              <Link
                href={href}
                aria-current={current ? "page" : undefined}
                className={
                  current
                    ? "block rounded-md bg-slate-900 px-3 py-1.5 font-medium text-white"
                    : "block rounded-md px-3 py-1.5 text-slate-700 hover:bg-slate-200"
                }
              >
                {sectionLabel(section, t)}
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
