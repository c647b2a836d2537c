"use client";
// What a dashboard section shows when its page failed to render (each section's error.tsx boundary:
// the database away, an unexpected error): a plain sentence and a retry. The error's message is not
// shown: in production Next.js replaces a server error's message with a digest anyway, and a message
// could name internals; the digest matches the server's log line.
//
// `retry` is the boundary's own (Next.js 16): it fetches the page from the server again and renders
// it in place of this message. `reset()` alone would re-render what the browser already has, which
// is the same failure.
import type { MessageKey } from "@/lib/i18n/messages";
import { useI18n } from "./i18n";

/** `what`: the page's name in the catalogue ("error.what.overview"), or a section's own words. */
export function SectionError({ what, error, retry, testId }: { what: MessageKey | { text: string }; error: Error & { digest?: string }; retry: () => void; testId?: string }) {
  const { t } = useI18n();
  return (
    <div className="space-y-3 rounded-lg border border-amber-300 bg-amber-50 p-5" role="alert" data-testid={testId}>
      <h2 className="font-semibold text-amber-900">{t("error.title", { what: typeof what === "string" ? t(what) : what.text })}</h2>
      <p className="text-sm text-amber-900">{t("error.text")}</p>
      {error.digest ? <p className="font-mono text-xs text-amber-800">{t("error.reference", { digest: error.digest })}</p> : null}
      <button type="button" className="rounded-md bg-amber-900 px-4 py-2 text-sm font-medium text-white hover:bg-amber-800" onClick={() => retry()}>
        {t("common.tryAgain")}
      </button>
    </div>
  );
}
