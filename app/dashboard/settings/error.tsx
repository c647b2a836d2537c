"use client";
// The settings page's error boundary: a failed read shows a retry, not a dead page (_components/section-error.tsx).
import { SectionError } from "../_components/section-error";

export default function SettingsError({ error, retry }: { error: Error & { digest?: string }; retry: () => void }) {
  return <SectionError what="error.what.settings" error={error} retry={retry} />;
}
