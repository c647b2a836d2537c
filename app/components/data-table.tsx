// A plain data table in the app's style, shared by the operator dashboard and the staff console.
import type { ReactNode } from "react";

export function DataTable({ columns, testId, children }: { columns: readonly string[]; testId?: string; children: ReactNode }) {
  return (
    <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white">
      <table className="min-w-full divide-y divide-slate-200 text-sm">
        <thead className="bg-slate-50 text-left text-slate-600">
          <tr>
            {columns.map((column) => (
              <th key={column} className="px-3 py-2 font-medium">
                {column}
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
