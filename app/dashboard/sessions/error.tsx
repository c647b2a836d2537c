"use client";
// The sessions pages' error boundary: a failed read shows a retry, not a dead page.
import { SectionError } from "../_components/section-error";

export default function SessionsError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return <SectionError what="sessions" error={error} reset={reset} />;
}
