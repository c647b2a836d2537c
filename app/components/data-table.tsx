// A plain data table in the app's style, shared by the operator dashboard and the staff console.
// A column given as `{ label, className: "hidden sm:table-cell" }` steps aside on small screens (its
// cells take the same class), so a phone shows the key columns without scrolling the page sideways;
// the wrapper scrolls inside itself as a last resort (a very long name), never the page.
import type { ReactNode } from "react";

export type Column = string | { label: string; className?: string };

export function DataTable({ columns, testId, children }: { columns: readonly Column[]; testId?: string; children: ReactNode }) {
  return (
    <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white">
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
