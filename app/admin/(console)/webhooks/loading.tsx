// The webhook log while its page is read: the shape of the list, so the page does not jump.
import { TableSkeleton } from "@/app/dashboard/_components/skeleton";

export default function Loading() {
  return <TableSkeleton rows={8} label="Loading the webhook log" />;
}
