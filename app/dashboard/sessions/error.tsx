"use client";
// The sessions pages's error boundary: a failed read shows a retry, not a dead page (_components/section-error.tsx).
import { SectionError } from "../_components/section-error";

export default function SessionsError({ error, retry }: { error: Error & { digest?: string }; retry: () => void }) {
  return <SectionError what="error.what.sessions" error={error} retry={retry} />;
}
