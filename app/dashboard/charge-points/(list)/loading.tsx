import { TableSkeleton } from "../../_components/skeleton";

export default function Loading() {
  return <TableSkeleton label="Loading charge points" />;
}
