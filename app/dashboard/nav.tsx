"use client";
// The dashboard's nav: the Overview, then the sections of the registry (./sections.ts). A client
// component only to mark the current one (usePathname); the links themselves work without JavaScript.
// On a phone the list scrolls sideways inside itself, never the page.
import Link from "next/link";
import { usePathname } from "next/navigation";
import { DASHBOARD_SECTIONS, OVERVIEW } from "./sections";

const SECTIONS = [OVERVIEW, ...DASHBOARD_SECTIONS];

export function DashboardNav() {
  const pathname = usePathname();
  return (
    <nav aria-label="Dashboard" className="-mx-1 overflow-x-auto">
      <ul className="flex min-w-max gap-1 px-1 text-sm">
        {SECTIONS.map(({ href, label }) => {
          const current = href === OVERVIEW.href ? pathname === href : pathname === href || pathname.startsWith(`${href}/`);
          return (
            <li key={href}>
              <Link
                href={href}
                aria-current={current ? "page" : undefined}
                className={
                  current
                    ? "block rounded-md bg-slate-900 px-3 py-1.5 font-medium text-white"
                    : "block rounded-md px-3 py-1.5 text-slate-700 hover:bg-slate-100"
                }
              >
                {label}
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
