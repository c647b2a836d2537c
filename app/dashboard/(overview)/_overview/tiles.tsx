// The Overview's building blocks: a headline figure, and a tile that frames a chart or a list.
import type { ReactNode } from "react";

export function Headline({ label, value, detail, testId }: { label: string; value: ReactNode; detail?: ReactNode; testId: string }) {
  return (
    <div className="min-w-0 rounded-lg border border-slate-200 bg-white p-4" data-testid={testId}>
      <p className="text-sm text-slate-600">{label}</p>
      <p className="mt-1 truncate text-2xl font-semibold tabular-nums text-slate-900" data-testid={`${testId}-value`}>
        {value}
      </p>
      {detail ? (
        <p className="mt-1 text-xs text-slate-500" data-testid={`${testId}-detail`}>
          {detail}
        </p>
      ) : null}
    </div>
  );
}

export function Tile({ title, children, testId, className = "" }: { title: string; children: ReactNode; testId: string; className?: string }) {
  return (
    <section className={`min-w-0 rounded-lg border border-slate-200 bg-white p-4 ${className}`} data-testid={testId} aria-label={title}>
      <h3 className="mb-3 font-medium text-slate-800">{title}</h3>
      {children}
    </section>
  );
}

/** What a tile says instead of figures (sessions not imported, nothing in the range, still copying). */
export function TileNote({ children }: { children: ReactNode }) {
  return <p className="rounded-md bg-slate-50 p-3 text-sm text-slate-600">{children}</p>;
}
