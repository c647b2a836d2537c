"use client";
// While the app's first copy of the operator's data is being made (lib/sync), a page that shows the
// copy asks the server for itself again every few seconds, so the figures appear, and the progress
// ("N copied so far") moves, without a reload. The server decides when to stop: once the copy is
// complete it no longer renders this component, which unmounts and clears its timer.
//
// router.refresh() re-renders the route's server components in place (no loading skeleton, no
// scroll jump) and reads only the app's database: it costs nothing from the install's rate budget
// at the service (contract §8). Pages render it only for an ACTIVE install: a flagged one's copy does
// not move (contract §7), and a page that polled it would poll for ever. docs/spec-gaps.md A134.
import { useRouter } from "next/navigation";
import { useEffect } from "react";
import { isSigningOut } from "@/app/components/sign-out-button";
import { useI18n } from "./i18n";

/** Every 3 s at first, when the copy of a usual operator ends; then every 15 s for a long one. */
export const QUICK_REFRESH_MS = 3_000;
export const SLOW_REFRESH_MS = 15_000;
export const QUICK_PHASE_MS = 2 * 60_000;

export function RefreshWhileCopying({ testId = "refresh-while-copying" }: { testId?: string }) {
  const router = useRouter();
  const { t } = useI18n();
  useEffect(() => {
    const started = Date.now();
    let timer: ReturnType<typeof setTimeout>;
    const schedule = () => {
      timer = setTimeout(tick, Date.now() - started < QUICK_PHASE_MS ? QUICK_REFRESH_MS : SLOW_REFRESH_MS);
    };
    const tick = () => {
      // A tab in the background asks nothing; it catches up when it is shown again.
      if (document.visibilityState === "visible" && !isSigningOut()) router.refresh();
      schedule();
    };
    const onShow = () => {
      if (document.visibilityState === "visible" && !isSigningOut()) router.refresh();
    };
    schedule();
    document.addEventListener("visibilitychange", onShow);
    return () => {
      clearTimeout(timer);
      document.removeEventListener("visibilitychange", onShow);
    };
  }, [router]);
  return (
    <p className="text-xs text-slate-500" data-testid={testId}>
      {t("common.updatesItself")}
    </p>
  );
}
