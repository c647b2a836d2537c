// A table whose secondary columns step aside on small screens (`className: "hidden sm:table-cell"`),
// so a phone shows the key columns without scrolling the page sideways. The wrapper scrolls inside
// itself as a last resort (a very long name), never the page.
import type { ReactNode } from "react";

export type Column = { label: string; className?: string };

export function ResponsiveTable({ columns, testId, children }: { columns: readonly Column[]; testId?: string; children: ReactNode }) {
  return (
    <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white">
      <table className="min-w-full divide-y divide-slate-200 text-sm">
        <thead className="bg-slate-50 text-left text-slate-600">
          <tr>
            {columns.map((column) => (
              <th key={column.label} scope="col" className={`px-3 py-2 font-medium ${column.className ?? ""}`}>
                {column.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100 align-top" data-testid={testId}>
          {children}
        </tbody>
      </table>
    </div>
  );
}
