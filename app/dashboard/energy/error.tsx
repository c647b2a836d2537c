"use client";
// The Energy page's error boundary: a failed read shows a retry, not a dead page (_components/section-error.tsx).
import { useI18n } from "../_components/i18n";
import { SectionError } from "../_components/section-error";
import { energyTranslator } from "./i18n";

export default function EnergyError({ error, retry }: { error: Error & { digest?: string }; retry: () => void }) {
  const t = energyTranslator(useI18n().locale);
  return <SectionError what={{ text: t("energy.error.what") }} error={error} retry={retry} />;
}
