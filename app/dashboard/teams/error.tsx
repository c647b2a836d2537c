"use client";
// The Teams page's error boundary: a failed read shows a retry, not a dead page (_components/section-error.tsx).
import { SectionError } from "../_components/section-error";

export default function TeamsError({ error, retry }: { error: Error & { digest?: string }; retry: () => void }) {
  return <SectionError what={{ text: "teams" }} error={error} retry={retry} />;
}
