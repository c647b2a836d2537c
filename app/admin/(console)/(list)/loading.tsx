// While the install list streams in: the shape of the counts and the table, so the page does not jump.
// In the "(list)" route group so it wraps the list alone: an install's page (installs/[id]) must
// still answer 404 for an unknown id, which a page behind a loading boundary can no longer do.
import { SkeletonLine, TableSkeleton } from "@/app/dashboard/_components/skeleton";

export default function Loading() {
  return (
    <div className="space-y-6">
      <div className="grid grid-cols-2 gap-3 md:grid-cols-4">
        {Array.from({ length: 4 }, (_, i) => (
          <SkeletonLine key={i} className="h-20 w-full" />
        ))}
      </div>
      <TableSkeleton rows={10} label="Loading installs" />
    </div>
  );
}
