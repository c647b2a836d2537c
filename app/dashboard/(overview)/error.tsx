"use client";
// The Overview's error boundary: a failed read shows a retry, not a dead page (_components/section-error.tsx).
import { SectionError } from "../_components/section-error";

export default function OverviewError({ error, retry }: { error: Error & { digest?: string }; retry: () => void }) {
  return <SectionError what="error.what.overview" error={error} retry={retry} testId="overview-error" />;
}
