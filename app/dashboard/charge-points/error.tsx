"use client";
// The charge points pages' error boundary: a failed read shows a retry, not a dead page.
import { SectionError } from "../_components/section-error";

export default function ChargePointsError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return <SectionError what="charge points" error={error} reset={reset} />;
}
