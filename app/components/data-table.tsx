// A plain data table in the app's style, shared by the operator dashboard and the staff console.
// A column given as `{ label, className: "hidden sm:table-cell" }` steps aside on small screens (its
// cells take the same class), so a phone shows the key columns without scrolling the page sideways;
// the wrapper scrolls inside itself as a last resort (a very long name), never the page.
//
// The wrapper takes keyboard focus (WCAG 2.1.1): a region that scrolls must be reachable without a
// mouse, or its hidden columns are out of reach for anyone on a keyboard. It is a named region, so a
// screen reader says what the focus landed on.
import type { ReactNode } from "react";

export type Column = string | { label: string; className?: string };

export function DataTable({ columns, label, testId, children }: { columns: readonly Column[]; label: string; testId?: string; children: ReactNode }) {
  return (
    <div
      className="overflow-x-auto rounded-lg border border-slate-200 bg-white focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-brand-700"
      role="region"
      aria-label={label}
      tabIndex={0}
    >
      <table className="min-w-full divide-y divide-slate-200 text-sm">
        <thead className="bg-slate-50 text-left text-slate-600">
          <tr>
            {columns.map((column) => {
              const { label, className } = typeof column === "string" ? { label: column, className: undefined } : column;
              return (
                <th key={label} scope="col" className={`px-3 py-2 font-medium ${className ?? ""}`}>
                  {label}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100 align-top" data-testid={testId}>
          {children}
        </tbody>
      </table>
    </div>
  );
}
