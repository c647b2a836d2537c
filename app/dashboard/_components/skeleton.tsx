// Placeholders shown while a page streams in (loading.tsx): the shape of what is coming, so the page
// does not jump when it arrives.
export function SkeletonLine({ className = "" }: { className?: string }) {
  return <div className={`animate-pulse rounded bg-slate-200 ${className}`} />;
}

export function TableSkeleton({ rows = 8, label }: { rows?: number; label: string }) {
  return (
    <div className="space-y-4" aria-busy="true" aria-live="polite">
      <span className="sr-only">{label}</span>
      <SkeletonLine className="h-6 w-48" />
      <SkeletonLine className="h-4 w-72 max-w-full" />
      <div className="space-y-2 rounded-lg border border-slate-200 bg-white p-3">
        {Array.from({ length: rows }, (_, i) => (
          <SkeletonLine key={i} className="h-6 w-full" />
        ))}
      </div>
    </div>
  );
}
