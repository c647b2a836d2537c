"use client";
// "Try again" under a read the service did not answer: asks the server for this page again, in place
// (router.refresh keeps the address, its query and what was typed elsewhere on the page). While it
// runs, the button says so and cannot be pressed twice, so a person waiting does not add requests to
// a service that is already struggling.
import { useRouter } from "next/navigation";
import { useTransition } from "react";
import { useI18n } from "./i18n";

export function RetryButton() {
  const router = useRouter();
  const [pending, startTransition] = useTransition();
  const { t } = useI18n();
  return (
    <button
      type="button"
      disabled={pending}
      onClick={() => startTransition(() => router.refresh())}
      className="rounded-md border border-amber-400 bg-white px-3 py-1.5 text-sm font-medium text-amber-900 hover:bg-amber-100 disabled:opacity-60"
      data-testid="retry"
    >
      {pending ? t("common.tryingAgain") : t("common.tryAgain")}
    </button>
  );
}
